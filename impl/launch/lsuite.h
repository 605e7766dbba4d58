/* The launch suite (ScELA, thesis ch. 2-3): whole jobs started by several
 * launchers and timed from outside.  For n hosts x c processes per host (x m
 * node agents per host, the host multiplier), every trial runs each launcher
 * with each program it can start, interleaved:
 *
 *   launchers  tree (ibchar-launch, degree auto), tree-kK (degree K), tree-cN
 *              (MAX_CONN N, where the degree rule binds), flat, mpich
 *              (mpirun.mpich, hydra), openmpi (mpirun.openmpi), srun (PMI-2),
 *              srun-pmix (for Open MPI's program)
 *   programs   true (ibchar-launch-probe: start only), pmi (one put / fence /
 *              all-gather of gets / barrier), hello (MPI_Init + MPI_Finalize of
 *              the launcher's MPI: ibchar-launch-hello-<mpi>)
 *   phases     spawn = last process started - command; init = last process
 *              through its PMI exchange or MPI_Init - last started; total =
 *              launcher exit - command
 *
 * and the node-level caches of ch. 3 under ibchar-launch: the 1:2 ring and
 * 1:p all-gather exchanges over several stages for every policy: time per
 * stage; the launcher's received messages and every agent's cache memory
 * from --stats-csv, with the stage count swept (launch-cache.csv); Table 3.1
 * computed for the thesis' sizes from the measured bytes per entry
 * (launch-memory.csv); the growth of each phase with the number of agents,
 * log n against linear (launch-growth.csv).  Rows go to results.csv. */
#ifndef IBC_LAUNCH_LSUITE_H
#define IBC_LAUNCH_LSUITE_H

#include "core/opt.h"

struct ibc_lsuite_opts {
	const char *suite;                 /* the suite column */
	const char *out, *run_id;
	const char *bindir;                /* ibchar-launch, -probe, -hello-<mpi> */
	struct ibc_opt_list hosts;         /* host counts to sweep */
	struct ibc_opt_list ppn;           /* processes per host to sweep */
	struct ibc_opt_list mult;          /* node agents per host (tree and flat only) */
	struct ibc_opt_strlist launchers;  /* empty: every one that runs here */
	struct ibc_opt_strlist programs;   /* empty: true,pmi,hello */
	struct ibc_opt_strlist caches;     /* empty: the four policies; "none" skips */
	const char *hostnames;             /* NULL: the test hosts ibc-h1..N */
	const char *rsh;                   /* NULL: 'ip netns exec {host}' for test hosts */
	long trials, stages, timeout_s;
	double rsh_delay_ms;               /* > 0: every remote shell call first sleeps this
					    * long (a connection's latency, as ssh across a
					    * network has), every launcher through one wrapper */
	int quiet;
};

/* 0 when every job ran, IBC_ERR_INVAL for bad options (printed), another
 * error when a job failed (its rows are missing; the others are written). */
int ibc_lsuite_run(const struct ibc_lsuite_opts *o);

/* Growth of y with x (x > 0, n >= 3): least squares y = a + b log2 x and
 * y = a + b x, with the R^2 of each.  IBC_ERR_INVAL for fewer than 3 points
 * or fewer than 2 distinct x. */
struct ibc_lsuite_growth {
	double log_a, log_b, log_r2;
	double lin_a, lin_b, lin_r2;
};
int ibc_lsuite_growth_fit(const double *x, const double *y, size_t n, struct ibc_lsuite_growth *g);

#endif
