/* The host MPI's launchers' command lines, built once for every caller (the
 * `ibchar run` loop's --launcher mpirun|srun and the launch suite's mpich,
 * openmpi and srun jobs): the head of an mpirun.<mpi> or srun argv, and Open
 * MPI's run-as-root environment.  Callers append their own options after
 * the head, then the program. */
#ifndef IBC_LAUNCH_HOSTCMD_H
#define IBC_LAUNCH_HOSTCMD_H

#define IBC_LAUNCH_HOSTCMD_MAX 8

struct ibc_launch_hostcmd {
	const char *argv[IBC_LAUNCH_HOSTCMD_MAX + 1]; /* NULL-terminated; the program not copied */
	char store[IBC_LAUNCH_HOSTCMD_MAX][32];        /* the numbers and --options formatted */
	int argc;
	char err[160];                                 /* why a build was refused */
	char name[32];                                 /* srun: the step's --job-name, unique */
};

/* "MPIRUN -n NP".  IBC_ERR_INVAL (c->err says why) for no program or NP < 1. */
int ibc_launch_hostcmd_mpirun(struct ibc_launch_hostcmd *c, const char *mpirun, int np);
/* "SRUN [-N NODES] -n NP [--ntasks-per-node=PPN] --mpi=PMI --job-name=NAME":
 * NODES and PPN left out when 0, PMI pmi2 or pmix, NAME (c->name) unique on
 * this machine, so a timeout can scancel the step (launcher/stop.h).  IBC_ERR_INVAL (c->err says why) for no
 * program, NP < 1, NODES or PPN < 0, another PMI. */
int ibc_launch_hostcmd_srun(struct ibc_launch_hostcmd *c, const char *srun, int nodes, int np, int ppn,
			    const char *pmi);
/* As root, Open MPI's mpirun (and its ranks under srun) refuse to run
 * unless OMPI_ALLOW_RUN_AS_ROOT and its _CONFIRM are 1: sets both, only as
 * root. */
void ibc_launch_hostcmd_root_env(void);

#endif
