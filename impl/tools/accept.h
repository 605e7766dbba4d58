/* ibchar accept: acceptance thresholds over a results directory.
 *
 * The spec is line-oriented; '#' starts a comment, blank lines are skipped:
 *
 *   run ARGS...                       `ibchar run ARGS --out DIR` (only when
 *                                     no DIR is given; no --out in ARGS)
 *   check SUITE VARIANT [KEY=VALUE...]: METRIC OP BOUND
 *
 * The rows checked: with run lines run, only the rows they appended to
 * DIR/results.csv (counted before and after each line, so older rows of DIR
 * never count, whatever their run_id); with DIR given, every row of DIR, or
 * of the runs (run_id) run_ids names.  A run is the rows of one run_id (and,
 * for accept's own runs, of one run line).
 *
 * Every run line first goes through `ibchar run --dry-run`: one it refuses
 * is a bad spec, and nothing runs.  Each run line is then a verdict: ok, or
 * not ok with its exit status and the line of its output that says why.
 *
 * KEY is impl, xport, ranks, bytes or fanin (bytes takes K/M/G); a check
 * applies to every checked row that matches, one verdict each, and fails
 * when none does.  METRIC is p50_us, mean_us, min_us, p99_us, max_us or
 * mbps (bytes / p50_us: MB/s).  OP is <=, <, >=, >.  BOUND is a number, or
 * F * REF [KEY=VALUE...] with REF one of
 *
 *   probe                        the row's placement probe (probe_us)
 *   impl=X | variant=X           the same METRIC of the row beside it in the
 *                                same run (same suite, xport, ranks, bytes,
 *                                fanin) with that impl (same variant) or that
 *                                variant (any measured impl: the host MPI's;
 *                                a row without a fan-in also does)
 *   SUITE.VARIANT at SIZE        the same METRIC of that suite's row at
 *                                bytes = SIZE, at the row's ranks and xport,
 *                                from the row's run or else another one
 *
 * and KEY=VALUE after REF naming the reference where it differs from the
 * checked row (e.g. ranks=2).  The reference is one row, named in the
 * verdict; none or several fail the check with the reason.  A time the
 * checks read that is not a finite number >= 0 is damaged input. */
#ifndef IBC_TOOLS_ACCEPT_H
#define IBC_TOOLS_ACCEPT_H

struct ibc_accept_opts {
	const char *spec;    /* the spec file */
	const char *dir;     /* results directory to check (runs go there when run is set) */
	int run;             /* run the spec's `run` lines first */
	const char *bindir;  /* for `ibchar run` */
	const char *junit;   /* NULL: none */
	int dry_run;         /* check the run lines (ibchar run --dry-run), list the lines; run nothing */
	const char *run_ids; /* with dir: the runs to check, comma-separated (NULL: every one) */
};

/* TAP on stdout.  IBC_OK when every run line and check holds;
 * IBC_ERR_REMOTE (exit 1) when one fails; IBC_ERR_INVAL (exit 2) for a bad
 * spec or run line (its line is printed), a bad DIR or --run-id, damaged
 * input, or a JUnit file that cannot be written. */
int ibc_harness_accept(const struct ibc_accept_opts *o);

#endif
