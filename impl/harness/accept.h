/* ibchar accept: acceptance thresholds over a results directory.
 *
 * The spec is line-oriented; '#' starts a comment, blank lines are skipped:
 *
 *   run ARGS...                       `ibchar run ARGS` into the results
 *                                     directory (only when no DIR is given)
 *   check SUITE VARIANT [KEY=VALUE...]: METRIC OP BOUND
 *
 * KEY is impl, xport, ranks, bytes or fanin (bytes takes K/M/G); a check
 * applies to every row of results.csv that matches, one verdict each, and
 * fails when none does.  METRIC is p50_us, mean_us, min_us, p99_us, max_us
 * or mbps (bytes / p50_us: MB/s).  OP is <=, <, >=, >.  BOUND is a number,
 * or F * REF with REF one of
 *
 *   probe                        the row's placement probe (probe_us)
 *   impl=X | variant=X           the same METRIC of the row beside it (same
 *                                suite, xport, ranks, bytes, fanin) with that
 *                                impl (same variant) or that variant (any
 *                                measured impl: the host MPI's)
 *   SUITE.VARIANT at SIZE        the same METRIC of that suite's row at
 *                                bytes = SIZE (e.g. link.write-bw-stream at 1M)
 *
 * A reference that names no row fails the check with the reason. */
#ifndef IBC_HARNESS_ACCEPT_H
#define IBC_HARNESS_ACCEPT_H

struct ibc_accept_opts {
	const char *spec;   /* the spec file */
	const char *dir;    /* results directory to check (runs go there when run is set) */
	int run;            /* run the spec's `run` lines first */
	const char *bindir; /* for `ibchar run` */
	const char *junit;  /* NULL: none */
	int dry_run;        /* parse and list the checks, check nothing */
};

/* 0 when every check holds; IBC_ERR_REMOTE (exit 1) when one fails or a run
 * fails; IBC_ERR_INVAL for a bad spec (the line is printed). */
int ibc_harness_accept(const struct ibc_accept_opts *o);

#endif
