/* ibchar-launch inside a Slurm allocation: the hosts and slots of the job
 * (SLURM_JOB_NODELIST expanded by Slurm's own `scontrol show hostnames`,
 * SLURM_TASKS_PER_NODE), and node launch agents started by srun, one task
 * on one node each, instead of ssh (compute nodes often refuse ssh). */
#ifndef IBC_LAUNCH_SLURM_H
#define IBC_LAUNCH_SLURM_H

#include <stddef.h>

/* The remote-shell template that starts an agent on {host} as a job step. */
#define IBC_LAUNCH_SLURM_RSH "srun --nodes=1 --ntasks=1 --nodelist={host} --overlap --mpi=none --quiet"

/* SLURM_TASKS_PER_NODE ("2(x3),1") -> slots[] (2, 2, 2, 1); returns the
 * number of nodes, IBC_ERR_INVAL for text that is not one, IBC_ERR_NOMEM
 * when more than cap. */
int ibc_launch_slurm_tasks_parse(const char *text, int *slots, int cap);

/* Inside an allocation (SLURM_JOB_NODELIST set): "host:slots,..." of the
 * job into hosts (malloc'd), IBC_OK; IBC_ERR_NOTFOUND (nothing logged)
 * outside one; other errors logged. */
int ibc_launch_slurm_hosts(char **hosts);

#endif
