/* Ending a launch that ran out of time (`ibchar run`'s wait, the launch
 * suite's jobs): through the launcher's own protocol first, then by force.
 * The launch was started as the leader of its own process group. */
#ifndef IBC_LAUNCH_STOP_H
#define IBC_LAUNCH_STOP_H

#include <sys/types.h>

/* How a launch was stopped. */
struct ibc_launch_stop_how {
	int cancelled;   /* Slurm steps cancelled with scancel */
	int killed;      /* 1: the grace ran out, SIGKILL to the group */
	int status;      /* the launcher's wait status */
};

/* Stops the launch whose launcher is pid (leader of its process group): a
 * Slurm step named slurm_name (srun --job-name; NULL or "": none) is
 * cancelled with scancel, since a killed srun cannot end its step; else the
 * group gets SIGTERM (mpirun and ibchar-launch pass it on to their ranks and
 * agents).  After grace_s seconds the group gets SIGKILL.  The launcher is
 * reaped and whatever it left in its group is killed.  IBC_OK, or
 * IBC_ERR_SYS when pid cannot be waited for. */
int ibc_launch_stop(pid_t pid, const char *slurm_name, double grace_s, struct ibc_launch_stop_how *how);

/* scancel every Slurm step named name (squeue -s): how many. */
int ibc_launch_stop_slurm(const char *name);

#endif
