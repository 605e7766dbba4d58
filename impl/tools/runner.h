/* The logic behind the `ibchar` command (runner/ibchar.c is its thin main):
 * listing what can run here and running suites through their bench binaries. */
#ifndef IBC_TOOLS_RUNNER_H
#define IBC_TOOLS_RUNNER_H

#include <stddef.h>

struct ibc_harness_runner_opts {
	const char *bindir;          /* where ibchar-<suite> binaries live */
	const char *out;             /* NULL: results/<UTC timestamp> */
	char *const *suites;         /* names; none = every suite that can run here */
	size_t nsuites;
	const char *ranks;           /* rank list text ("2,4,8..16"); NULL: suite default */
	/* passed through to the bench when set */
	const char *variants, *fanin, *sizes, *xport, *launcher, *mpi;
	const char *hosts, *ppn;     /* self-launched suites (launch): host counts, processes per host */
	int sync;                    /* an enum ibc_harness_sync_mode; AUTO: not passed */
	long iters, warmup;          /* 0 / -1: not passed */
	double budget;               /* < 0: not passed */
	/* a launch that writes no row for this long is ended (its launcher's
	 * own way, then by force): < 0: derived from the budget (3 x budget +
	 * 60 s; 600 s with no budget); 0: no deadline */
	double timeout;
	int validate;
	long repeat;                 /* passes of the whole sweep, each its own run_id (0, 1: one) */
	int dry_run;                 /* check the options, suites and variants; make and run nothing */
};

/* Prints suites, their variants, transports and MPIs found on stdout. */
int ibc_harness_runner_list(const char *bindir);
/* Runs the suites; progress on stderr, the summary table on stdout.
 * IBC_ERR_INVAL, before a directory is made or anything runs, for an unknown
 * suite, variant, MPI, launcher or transport, a bad rank, size or fan-in
 * list, --mpi naming an MPI no chosen suite is built with, or --mpi with a
 * launcher that cannot run the MPI build (--mpi alone picks mpirun).  A rank
 * count outside a suite's range is skipped for that suite with a note.  With
 * repeat R > 1 the sweep runs R times, pass k under run_id <stamp>.k.  With
 * dry_run, returns after those checks (IBC_OK: the run would start). */
int ibc_harness_runner_run(const struct ibc_harness_runner_opts *o);
/* The LoP closed loop on dir's rows (logp_model.h) with the fits in
 * fits_dir (NULL: dir), for every suite of the table with rounds; the
 * table on stdout; pus > 0: PUs per node; any_placement: model rows
 * whatever the placement probe says; b2b: round trips from the kernels'
 * back-to-back loops where measured; meas_mean: rows measured by their
 * loops' means, not their medians (logp_model.h). */
int ibc_harness_runner_model(const char *dir, const char *fits_dir, int pus, int any_placement,
			     int b2b, int meas_mean);
/* The directory of the running executable (for bindir). */
int ibc_harness_runner_bindir(char *buf, size_t cap);

#endif
