/* The harness checks shared by fork.c (fork bootstrap) and harness_mpi.c
 * (MPI bootstrap): injected per-rank delays, every rank runs them, rank 0
 * alone prints TAP.
 *
 *   A  "sleep":  rank r in iteration i sleeps D * (1 + (r + i) % 4) us (4+
 *                ranks): the slowest rank always sleeps 4D, the fastest D,
 *                so p50 ~ 4D, skew ~ 3D, the mean over ranks ~ 2.5D.
 *   B  "exact":  sets its sample to 10 r + i % 5: per iteration the
 *                slowest rank gives 10 (n-1) + i % 5, skew 10 (n-1), the
 *                mean over ranks 5 (n-1) + 2: exact numbers.
 *   C  "root":   like B with IBC_HARNESS_TIME_ROOT: rank 0's i % 5.
 * Every operation logs its calls (upper case timed, lower case not:
 * ibc_harness_call); each warm-up round runs every variant once; timed
 * rounds interleave variants of about one duration, rotated (B C, C B, ...),
 * each timed call after an untimed one of it (its prime: b B c C, c C b B,
 * ...), and A, a thousand times slower, is timed after them, alone and not
 * primed. */
#ifndef IBC_TEST_HARNESS_CHECKS_H
#define IBC_TEST_HARNESS_CHECKS_H

#include "boot/boot.h"
#include "core/csv.h"
#include "core/status.h"
#include "harness/harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define CHK_ITERS 40
#define CHK_D_US 1000.0
#define CHK_LOG 512

struct chk_op {
	char tag;
	long timed;     /* timed calls so far */
};

static char chk_log[CHK_LOG];
static size_t chk_log_n;

static void chk_log_add(char c)
{
	if (chk_log_n + 1 < CHK_LOG) {
		chk_log[chk_log_n++] = c;
		chk_log[chk_log_n] = '\0';
	}
}

static int chk_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct chk_op *o = arg;

	(void)h;
	(void)pt;
	o->timed = 0;
	return IBC_OK;
}

/* logs the call; the timed index of a timed call, else -1 */
static long chk_call(struct ibc_harness *h, struct chk_op *o)
{
	int timed = ibc_harness_call(h) == IBC_HARNESS_CALL_TIMED;

	chk_log_add(timed ? o->tag : (char)(o->tag - 'A' + 'a'));
	return timed ? o->timed++ : -1;
}

static int chk_run_sleep(struct ibc_harness *h, void *arg)
{
	struct chk_op *o = arg;
	int r = ibc_harness_boot(h)->rank;
	long i = chk_call(h, o);
	double us = CHK_D_US * (1 + (r + (i < 0 ? 0 : i)) % 4);
	struct timespec ts = { 0, (long)(us * 1000) };

	nanosleep(&ts, NULL);
	return IBC_OK;
}

static int chk_run_exact(struct ibc_harness *h, void *arg)
{
	struct chk_op *o = arg;
	int r = ibc_harness_boot(h)->rank;
	long i = chk_call(h, o);

	ibc_harness_sample_set(h, 10.0 * r + (double)((i < 0 ? 0 : i) % 5));
	return IBC_OK;
}

static double chk_num(const struct ibc_csv_table *t, size_t row, const char *col)
{
	const char *c = ibc_csv_cell(t, row, col);

	return c != NULL && c[0] != '\0' ? strtod(c, NULL) : -1e300;
}

static long chk_row(const struct ibc_csv_table *t, const char *variant)
{
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_cell(t, r, "variant"), variant) == 0)
			return (long)r;
	return -1;
}

/* "k=v;..." -> v of k, or -1 */
static double chk_extra(const struct ibc_csv_table *t, size_t row, const char *key)
{
	const char *e = ibc_csv_cell(t, row, "extra"), *p;
	size_t kl = strlen(key);

	for (p = e; p != NULL && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == '=')
			return strtod(p + kl + 1, NULL);
	return -1;
}

/* number of TAP lines chk_run prints on rank 0 */
#define CHK_TESTS 20

static void chk_run(struct ibc_boot *b, const char *launcher)
{
	static struct chk_op oa = { .tag = 'A' }, ob = { .tag = 'B' }, oc = { .tag = 'C' };
	const struct ibc_harness_op ops[] = {
		{ .variant = "sleep", .arg = &oa, .setup = chk_setup, .run = chk_run_sleep },
		{ .variant = "exact", .arg = &ob, .setup = chk_setup, .run = chk_run_exact },
		{ .variant = "root", .arg = &oc, .setup = chk_setup, .run = chk_run_exact,
		  .timing = IBC_HARNESS_TIME_ROOT },
	};
	struct ibc_harness_params p;
	char dir[64] = "/tmp/ibc-harness-XXXXXX", path[128];
	int n = b->size, rc, ok_order = 1, *orders = NULL, r;
	struct ibc_csv_table *t = NULL;
	size_t i;
	long ra, rb, rcr;
	double want;

	prctl(PR_SET_TIMERSLACK, 1UL);
	if (b->rank == 0 && mkdtemp(dir) == NULL)
		dir[0] = '\0';
	ibc_boot_bcast(b, dir, sizeof(dir), 0);
	ibc_harness_params_init(&p);
	p.suite = "harness-test";
	p.out_dir = dir;
	p.launcher = launcher;
	p.iters = CHK_ITERS;
	p.warmup = 3;
	p.print_rows = 0;
	p.pin = 0;
	p.factor_refs[0] = "exact";
	p.nfactor_refs = 1;
	/* these checks are about the reduction, on the barrier sync (window
	 * mode has tests/harness/window.c) */
	p.sync_mode = IBC_HARNESS_SYNC_BARRIER;
	chk_log_n = 0;
	rc = ibc_harness_run(b, &p, ops, 3);

	/* interleaving: warm-up rounds a b c (untimed); then the timed rounds
	 * in groups of about one duration, fastest first: B and C
	 * (microseconds) interleaved and rotated, each primed (b B c C, c C b
	 * B, ...), then A (milliseconds) alone, unprimed (its own last call
	 * before each) */
	for (i = 0; i < chk_log_n; i++) {
		char expect;

		if (i < 9) {
			expect = "abc"[i % 3];
		} else if (i < 9 + 4 * CHK_ITERS) {
			size_t j = (i - 9) / 4, pos = (i - 9) % 4;

			expect = "BC"[(pos / 2 + j) % 2];
			if (pos % 2 == 0)
				expect = (char)(expect - 'A' + 'a');
		} else {
			expect = 'A';
		}
		if (chk_log[i] != expect)
			ok_order = 0;
	}
	if (chk_log_n != 9 + 5 * CHK_ITERS)
		ok_order = 0;
	if (b->rank == 0)
		orders = calloc((size_t)n, sizeof(int));
	ibc_boot_gather(b, &ok_order, orders, sizeof(int), 0);
	if (b->rank != 0)
		return;

	tap_is_int(rc, IBC_OK, "%d ranks: harness run succeeds", n);
	for (r = 0; r < n && orders != NULL && orders[r]; r++)
		;
	tap_ok(orders != NULL && r == n, "%d ranks: variants of one duration interleaved and rotated, each timed call after an untimed one of it (b B c C, c C b B, ...), the 1000x slower one timed after them unprimed, on every rank", n);
	free(orders);
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	rc = ibc_csv_read(path, &t);
	tap_is_int(rc, IBC_OK, "%d ranks: results.csv reads back", n);
	if (rc != IBC_OK) {
		tap_skip(CHK_TESTS - 3, "no results.csv");
		return;
	}
	ra = chk_row(t, "sleep");
	rb = chk_row(t, "exact");
	rcr = chk_row(t, "root");
	tap_ok(t->nrows == 4 && ra >= 0 && rb >= 0 && rcr >= 0, "%d ranks: one row per variant", n);
	if (ra < 0 || rb < 0 || rcr < 0) {
		tap_skip(CHK_TESTS - 4, "rows missing");
		ibc_csv_table_free(t);
		return;
	}
	tap_is_int((long long)chk_num(t, (size_t)rb, "ranks"), n, "%d ranks: ranks column", n);
	tap_is_int((long long)chk_num(t, (size_t)rb, "iters"), CHK_ITERS, "%d ranks: iters column", n);
	/* B: exact */
	want = 10.0 * (n - 1) + 2; /* median of i % 5 over 40 iterations is 2 */
	tap_is_double_within(chk_num(t, (size_t)rb, "p50_us"), want, 1e-3,
			     "%d ranks: slowest-rank rule: exact p50 = 10(n-1) + 2", n);
	tap_is_double_within(chk_num(t, (size_t)rb, "max_us"), 10.0 * (n - 1) + 4, 1e-3,
			     "%d ranks: exact max = 10(n-1) + 4", n);
	tap_is_double_within(chk_num(t, (size_t)rb, "min_us"), 10.0 * (n - 1), 1e-3,
			     "%d ranks: exact min = 10(n-1)", n);
	tap_is_double_within(chk_num(t, (size_t)rb, "skew_us"), 10.0 * (n - 1), 1e-3,
			     "%d ranks: exact skew = 10(n-1)", n);
	tap_is_double_within(chk_extra(t, (size_t)rb, "rank_mean_us"), 5.0 * (n - 1) + 2, 1e-3,
			     "%d ranks: mean over ranks = 5(n-1) + 2", n);
	/* C: rank 0's time */
	tap_is_double_within(chk_num(t, (size_t)rcr, "p50_us"), 2, 1e-3,
			     "%d ranks: root timing takes rank 0's samples (p50 2)", n);
	tap_is_double_within(chk_extra(t, (size_t)rcr, "factor_vs_exact"),
			     (10.0 * (n - 1) + 2) / 2, 1e-3, "%d ranks: factor_vs_exact from the same run", n);
	/* A: real (sleeping) time, generous bounds */
	if (n >= 4) {
		double p50 = chk_num(t, (size_t)ra, "p50_us"), skew = chk_num(t, (size_t)ra, "skew_us");

		tap_ok(p50 >= 4 * CHK_D_US && p50 < 4 * CHK_D_US + 20000,
		       "%d ranks: sleep p50 %.1f us ~ slowest rank's 4D = %.0f us", n, p50, 4 * CHK_D_US);
		tap_ok(skew > 3 * CHK_D_US - 1500 && skew < 3 * CHK_D_US + 5000,
		       "%d ranks: sleep skew %.1f us ~ 3D = %.0f us", n, skew, 3 * CHK_D_US);
		/* means keep every tail: bound below by 2.5D and above by the mean
		 * of the per-iteration maxima (always >= the mean over ranks) */
		tap_ok(chk_extra(t, (size_t)ra, "rank_mean_us") > 2.5 * CHK_D_US - 100 &&
		       chk_extra(t, (size_t)ra, "rank_mean_us") <= chk_num(t, (size_t)ra, "mean_us") + 1e-3,
		       "%d ranks: sleep mean over ranks %.1f >= 2.5D and <= mean of slowest %.1f", n,
		       chk_extra(t, (size_t)ra, "rank_mean_us"), chk_num(t, (size_t)ra, "mean_us"));
	} else {
		double p50 = chk_num(t, (size_t)ra, "p50_us");
		double hi = n == 1 ? 1 : 4; /* n = 2: ranks see D..4D, max is 2D..4D */

		tap_ok(p50 >= CHK_D_US && p50 < hi * CHK_D_US + 20000, "%d ranks: sleep p50 %.1f us plausible", n, p50);
		tap_ok(chk_num(t, (size_t)ra, "skew_us") >= 0, "%d ranks: sleep skew reported", n);
		tap_ok(chk_extra(t, (size_t)ra, "rank_mean_us") >= CHK_D_US, "%d ranks: sleep mean over ranks reported", n);
	}
	{
		const char *probe = ibc_csv_cell(t, (size_t)rb, "probe_us");

		if (n >= 2)
			tap_ok(probe != NULL && probe[0] != '\0' && strtod(probe, NULL) > 0,
			       "%d ranks: placement probe in probe_us (%s us)", n, probe ? probe : "?");
		else
			tap_ok(probe != NULL && probe[0] == '\0', "1 rank: probe_us empty (no peer)");
	}
	tap_is_str(ibc_csv_cell(t, (size_t)rb, "launcher"), launcher, "%d ranks: launcher column", n);
	tap_ok(strstr(ibc_csv_cell(t, (size_t)rb, "extra"), "group=1/2") != NULL &&
	       strstr(ibc_csv_cell(t, (size_t)rcr, "extra"), "group=1/2") != NULL &&
	       strstr(ibc_csv_cell(t, (size_t)ra, "extra"), "group=2/2") != NULL,
	       "%d ranks: extra names each row's timed group (exact, root 1/2; sleep 2/2)", n);
	tap_ok(strstr(ibc_csv_cell(t, (size_t)rb, "extra"), "primed=1") != NULL &&
	       strstr(ibc_csv_cell(t, (size_t)rcr, "extra"), "primed=1") != NULL &&
	       strstr(ibc_csv_cell(t, (size_t)ra, "extra"), "primed=1") != NULL,
	       "%d ranks: extra says primed=1 on the rows that were, and on the one timed alone in its "
	       "group, after its own last call (exact, root; sleep)", n);
	ibc_csv_table_free(t);
	unlink(path);
	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	unlink(path);
	rmdir(dir);
}

#endif
