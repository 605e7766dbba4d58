/* ibchar compare BASE NEW: regression verdicts between two results
 * directories, judged against the noise of unchanged code.
 *
 * Units.  A row (suite, variant, impl, xport, nodes, ppn, ranks, bytes,
 * fanin) may appear in several runs of a directory (`ibchar run --repeat R`
 * gives each pass its own run_id).  Each run contributes one figure per row:
 * the median of its kept samples (samples.csv), or the row's single figure
 * (extra n=1).  The runs are the units; samples inside a run are not treated
 * as independent (they are autocorrelated, and the runs of one build differ
 * by more than a run's own spread).
 *
 * Noise.  A row's noise is the scatter of its figure between BASE's runs:
 * the standard deviation of the log figures over BASE's R_b >= 3 runs, raised
 * to the median scatter of the rows of its suite and to at least
 * IBC_COMPARE_ROW_FLOOR.  NEW's runs (R_n >= 1) are never used to set the
 * noise.
 *
 * Rows.  d = mean log figure of NEW - mean log figure of BASE; the row is
 * slower when d > K * sigma * sqrt(1/R_n + 1/R_b) (K = IBC_COMPARE_K), faster
 * when d < -that, unchanged otherwise; inconclusive (with the reason) when
 * BASE holds fewer than IBC_COMPARE_MIN_RUNS runs of it, a run kept fewer than
 * IBC_COMPARE_MIN_KEPT samples or NEW's fewer than half of BASE's fewest (the
 * scatter of BASE's medians is then not that of NEW's), the row was
 * oversubscribed, the run's own placement probe (probe_us) moved by
 * 1 + IBC_COMPARE_PROBE_MOVE or more and beyond its threshold from BASE's
 * scatter (the ranks got other cores: 1.5x in a guest, 5x near and far on
 * this host; 12% between two shm runs that kept their cores), it is a
 * placement probe (the probe suite), or it has no positive figure; --strict
 * judges all of these like the others.  A BASE row missing in NEW
 * fails.
 *
 * Groups.  Per suite and per suite and variant, over the rows judged (at
 * least IBC_COMPARE_MIN_GROUP rows): the median of the rows' d with the
 * order-statistic (sign-test) 95% interval over rows.  Its noise is BASE's
 * run-to-run scatter of the same statistic (run p of every row, p-th by
 * run_id, as the pass; the group's median deviation from the rows' means),
 * at least IBC_COMPARE_GROUP_FLOOR.  A group is slower when the median is
 * beyond K times that noise (times sqrt(1/R_n + 1/R_b)) and the interval
 * lies above 0: a broad shift each row alone may hide in its noise.
 *
 * The machine.  The placement probe's probe-same row (two ranks on one PU:
 * a pair of context switches) measures the machine's CPU and kernel, not the
 * code.  When its log ratio is beyond its own row threshold, the machine
 * changed speed between BASE and NEW (a TCG guest on a shared host: 4x from
 * one day to the next) and every row and group verdict becomes inconclusive,
 * saying so (one line on stderr as well); --strict keeps the verdicts.  A
 * code change that slows probe-same too cannot be told from the machine.
 * Without a probe-same row (3 BASE runs, both sides) the header says the
 * machine is not checked.  Another machine, whatever its speed: NEW's
 * meta.csv names a cpu_model BASE's does not, or both name a guest's host
 * (vm_host_cpu) and NEW's is not BASE's; every verdict is inconclusive
 * ("another machine"), --strict judges.  The header's "the CPU" line says
 * what was compared.
 *
 * Damaged input (a missing directory, results.csv or meta.csv; an empty or
 * malformed file; a non-numeric cell; samples.csv whose n differs from its
 * values, or rows of one file the other does not have) is an error, one line
 * on stderr.  TAP on stdout (rows, then groups), JUnit XML on request. */
#ifndef IBC_TOOLS_COMPARE_H
#define IBC_TOOLS_COMPARE_H

#include <stddef.h>

#define IBC_COMPARE_K 4.0             /* threshold: K x the noise of the difference */
#define IBC_COMPARE_ROW_FLOOR 0.02    /* a row's run-to-run scatter is at least 2% */
#define IBC_COMPARE_GROUP_FLOOR 0.015 /* a group median's run-to-run scatter, at least 1.5% */
#define IBC_COMPARE_MIN_RUNS 3        /* BASE runs a row needs for a verdict */
#define IBC_COMPARE_MIN_KEPT 5        /* kept samples a run of a row needs for a median */
#define IBC_COMPARE_MIN_GROUP 6       /* judged rows a group needs for a verdict */
#define IBC_COMPARE_PROBE_MOVE 0.25   /* a run's placement probe moved: 1.25x or more, and beyond its scatter */
#define IBC_COMPARE_MACHINE_ROW "probe-same" /* the probe variant that measures the machine */

struct ibc_compare_opts {
	const char *base, *new_dir;
	const char *junit;       /* NULL: none */
	double min_effect;       /* a change smaller than this fraction is never slower or
				    faster, whatever the noise; 0: none */
	int strict;              /* oversubscribed rows and placement probes are judged */
	double max_threshold;    /* a row or group whose threshold is wider than this fraction
				    is not called unchanged (it could not have told a change
				    that large) but inconclusive; 0: no limit */
};
#define IBC_COMPARE_MAX_THRESHOLD 1.0 /* `ibchar compare`'s default: +-100%, a 2x slowdown */

/* IBC_OK: nothing slower, nothing missing; IBC_ERR_REMOTE (exit 1): a row or
 * group slower, or a row missing in NEW; IBC_ERR_INVAL (exit 2): damaged or
 * missing input, or the JUnit file cannot be written. */
int ibc_harness_compare(const struct ibc_compare_opts *o);

#endif
