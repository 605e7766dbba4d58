/* ibchar compare BASE NEW: noise-aware verdicts between two results
 * directories.  Rows are matched on (suite, variant, impl, xport, ranks,
 * bytes, fanin); each matched pair's kept samples (samples.csv) give the
 * ratio of medians NEW / BASE with a 95% interval (from the medians'
 * order-statistic intervals) and a two-sided Mann-Whitney test.  A row is
 * slower when p < alpha, the ratio exceeds 1 + the minimum effect and the
 * interval's low end is above 1; faster symmetrically; otherwise unchanged.
 * The minimum effect defaults from the two runs' own spread, for
 * oversubscribed and other rows apart: 3 x the median relative half-width
 * of the medians' intervals, and with 10 or more rows at least 2.5 x the
 * 90th percentile of how far the rows' log ratios stray from their median;
 * never * below 5%.  A slower row within a slower placement probe of NEW is
 * "placement"; a slower oversubscribed row is advisory unless strict; so is
 * a row slower per iteration whose back-to-back median (b2b_p50_us in
 * results.csv's extra) is within the minimum effect of BASE's: the
 * operation's own loop did not slow, what surrounds each timed iteration
 * did (on Soft-RoCE under TCG a single ping-pong after the window's wait
 * moves 1.2-1.8x with the host while back to back stays within 9%).  The
 * probe suite's rows (where the ranks sit) stay out of the spread and are
 * advisory when slower; a row timed in another group than in BASE (extra's
 * group) says so after its verdict.  A row of BASE missing in NEW fails.
 * TAP on stdout, JUnit XML on request. */
#ifndef IBC_HARNESS_COMPARE_H
#define IBC_HARNESS_COMPARE_H

#include <stddef.h>

struct ibc_compare_opts {
	const char *base, *new_dir;
	const char *junit;       /* NULL: none */
	double min_effect;       /* < 0: from the runs' spread */
	double alpha;            /* significance, default 0.01 */
	int strict;              /* oversubscribed and per-iteration-only rows fail too
				    (default: advisory) */
};

/* 0: no regression and nothing missing; IBC_ERR_REMOTE (exit 1) otherwise;
 * IBC_ERR_INVAL / IBC_ERR_NOTFOUND for unreadable directories. */
int ibc_harness_compare(const struct ibc_compare_opts *o);

#endif
