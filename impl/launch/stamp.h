/* Time stamps of the launch suite's programs.  Every process of a measured
 * job appends one line to a stamp file named on its command line, with one
 * write(2) of O_APPEND (whole lines, whatever the launcher's placement):
 *
 *   rank size t_start t_init t_end nstages stage_1 .. stage_n
 *
 * times in CLOCK_REALTIME nanoseconds (one clock for every process of this
 * machine, network namespaces included; across real hosts it is as good as
 * their NTP), stages in nanoseconds.  rank/size are what the process learnt
 * from its launcher (-1 when it learnt nothing). */
#ifndef IBC_LAUNCH_STAMP_H
#define IBC_LAUNCH_STAMP_H

#include <stddef.h>
#include <stdint.h>

#define IBC_LAUNCH_STAMP_STAGES 64

struct ibc_launch_stamp {
	int rank, size;
	int64_t t_start, t_init, t_end; /* ns */
	int nstages;
	int64_t stage[IBC_LAUNCH_STAMP_STAGES]; /* ns */
};

int64_t ibc_launch_stamp_now(void);
/* Appends s as one line to path (created 0644).  IBC_ERR_SYS on failure. */
int ibc_launch_stamp_write(const char *path, const struct ibc_launch_stamp *s);
/* Reads every line of path into a malloc'd array (*out, *n).  A line that
 * does not parse is IBC_ERR_PROTO; a missing file is 0 stamps. */
int ibc_launch_stamps_read(const char *path, struct ibc_launch_stamp **out, size_t *n);
/* The rank and size a process got from its launcher's environment:
 * PMI_RANK/PMI_SIZE (ibchar-launch, hydra), SLURM_PROCID/SLURM_NTASKS,
 * OMPI_COMM_WORLD_RANK/_SIZE; -1 when none is set. */
void ibc_launch_stamp_env_rank(int *rank, int *size);

#endif
