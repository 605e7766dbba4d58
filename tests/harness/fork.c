/* The harness end to end on 4 ranks (and 2) with the fork bootstrap:
 * slowest-rank rule, skew, mean over ranks, interleaving (checks.h). */
#include "checks.h"


#include <stdlib.h>

static void one_job(int n)
{
	struct ibc_boot *b;
	int rc = ibc_boot_fork_open(n, &b), rank;

	if (rc != IBC_OK) {
		tap_ok(0, "fork open %d ranks: %s", n, ibc_status_str(rc));
		tap_skip(CHK_TESTS, "no job");
		return;
	}
	rank = b->rank;
	chk_run(b, "fork");
	rc = ibc_boot_close(b);
	if (rank != 0)
		exit(0); /* a test child: leave without the parent's TAP */
	tap_is_int(rc, IBC_OK, "%d ranks: job closes cleanly", n);
}

/* window mode: rank r sleeps 200 (r + 1) us from a common start, so the
 * slowest rank ends ~400 us after it and the skew is ~200 us */
static int win_run(struct ibc_harness *h, void *arg)
{
	struct timespec ts = { 0, 200000L * (ibc_harness_boot(h)->rank + 1) };

	(void)arg;
	nanosleep(&ts, NULL);
	return IBC_OK;
}

static void window_job(void)
{
	const struct ibc_harness_op op = { .variant = "window", .run = win_run };
	struct ibc_harness_params p;
	struct ibc_csv_table *t = NULL;
	char dir[64] = "/tmp/ibc-window-XXXXXX", path[128];
	struct ibc_boot *b;
	int rc = ibc_boot_fork_open(2, &b), rank;
	double p50, skew;

	if (rc != IBC_OK) {
		tap_skip(4, "no job");
		return;
	}
	rank = b->rank;
	if (rank == 0 && mkdtemp(dir) == NULL)
		dir[0] = '\0';
	ibc_boot_bcast(b, dir, sizeof(dir), 0);
	ibc_harness_params_init(&p);
	p.suite = "harness-window";
	p.out_dir = dir;
	p.iters = 50;
	p.warmup = 2;
	p.window_us = 5000;
	p.sync_mode = IBC_HARNESS_SYNC_WINDOW;
	prctl(PR_SET_TIMERSLACK, 1UL);
	p.print_rows = 0;
	p.probe = NULL;
	rc = ibc_harness_run(b, &p, &op, 1);
	if (ibc_boot_close(b) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_REMOTE;
	if (rank != 0)
		exit(0);
	tap_is_int(rc, IBC_OK, "window mode: run succeeds");
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK || t->nrows != 2) {
		tap_skip(3, "no row");
		return;
	}
	p50 = chk_num(t, 0, "p50_us");
	skew = chk_num(t, 0, "skew_us");
	tap_ok(p50 >= 399 && p50 < 400 + 20000, "window mode: slowest end - common start %.1f us ~ 400", p50);
	tap_ok(skew > 100 && skew < 200 + 5000, "window mode: skew %.1f us ~ 200", skew);
	tap_ok(chk_extra(t, 0, "late_iters") >= 0 && chk_extra(t, 0, "window_us") == 5000,
	       "window mode: window and late starts in extra (%s)", ibc_csv_cell(t, 0, "extra"));
	ibc_csv_table_free(t);
	unlink(path);
	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	tap_plan(2 * (CHK_TESTS + 1) + 4);
	one_job(4);
	one_job(2);
	window_job();
	return tap_done();
}
