/* The harness with one rank (single bootstrap): statistics of known
 * injected times, every docs/design.md column read back through ibc_csv_read,
 * validation, unsupported setup, the time budget, scale, factor columns. */
#include "boot/boot.h"
#include "core/csv.h"
#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const design_columns[] = {
	"run_id", "suite", "variant", "impl", "xport", "launcher", "nodes", "ppn", "ranks",
	"bytes", "fanin", "iters", "warmup", "min_us", "p50_us", "mean_us", "p99_us", "max_us",
	"stdev_us", "ci_lo_us", "ci_hi_us", "skew_us", "wait", "oversub", "probe_us", "extra"
};

struct fake {
	long calls;
	double spin_us[3];  /* iteration i spins spin_us[i % 3] */
	int validate_rc;
	int validated;
	int setup_rc;
	double fixed;       /* > 0: sample_set(fixed) */
};

static int f_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct fake *f = arg;

	(void)h;
	(void)pt;
	f->calls = 0;
	return f->setup_rc;
}

static int f_run(struct ibc_harness *h, void *arg)
{
	struct fake *f = arg;

	if (f->fixed > 0)
		ibc_harness_sample_set(h, f->fixed);
	else
		ibc_timer_spin_us(f->spin_us[f->calls % 3]);
	f->calls++;
	return IBC_OK;
}

static int f_validate(struct ibc_harness *h, void *arg)
{
	struct fake *f = arg;

	(void)h;
	f->validated++;
	return f->validate_rc;
}

static int f_extra(struct ibc_harness *h, void *arg, char *buf, size_t cap)
{
	(void)h;
	(void)arg;
	snprintf(buf, cap, "retransmits=3;note=a,b");
	return IBC_OK;
}

static double num(const struct ibc_csv_table *t, size_t row, const char *col)
{
	const char *c = ibc_csv_cell(t, row, col);

	return c != NULL && c[0] != '\0' ? strtod(c, NULL) : -1;
}

static long row_of(const struct ibc_csv_table *t, const char *variant, const char *bytes)
{
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_cell(t, r, "variant"), variant) == 0 &&
		    (bytes == NULL || strcmp(ibc_csv_cell(t, r, "bytes"), bytes) == 0))
			return (long)r;
	return -1;
}

/* the last row of variant (rows of earlier runs and points come first) */
static long row_last(const struct ibc_csv_table *t, const char *variant)
{
	long r, last = -1;

	for (r = 0; r + 1 < (long)t->nrows; r++)
		if (strcmp(ibc_csv_cell(t, (size_t)r, "variant"), variant) == 0)
			last = r;
	return last;
}

int main(void)
{
	struct fake spin = { .spin_us = { 100, 150, 200 } }, fixed = { .fixed = 40 },
		    bad = { .fixed = 5, .validate_rc = IBC_ERR_VALIDATE },
		    unsup = { .fixed = 1, .setup_rc = IBC_ERR_UNSUPPORTED },
		    slow = { .spin_us = { 2000, 2000, 2000 } }, slow2 = { .spin_us = { 2000, 2000, 2000 } },
		    mid = { .spin_us = { 200, 200, 200 } }, mid2 = { .spin_us = { 200, 200, 200 } },
		    fslow = { .fixed = 40 };
	struct ibc_harness_op ops[] = {
		{ .variant = "spin", .arg = &spin, .setup = f_setup, .run = f_run, .fanin = 3,
		  .validate = f_validate, .extra = f_extra },
		{ .variant = "fixed-ref", .arg = &fixed, .setup = f_setup, .run = f_run, .scale = 0.5,
		  .impl = "openmpi" },
		{ .variant = "unsupported", .arg = &unsup, .setup = f_setup, .run = f_run },
	};
	struct ibc_harness_op op_bad = { .variant = "bad", .arg = &bad, .setup = f_setup,
					 .run = f_run, .validate = f_validate };
	struct ibc_harness_op op_slow = { .variant = "slow", .arg = &slow, .setup = f_setup, .run = f_run };
	struct ibc_harness_op op_fslow = { .variant = "fixed-slow", .arg = &fslow, .setup = f_setup,
					   .run = f_run };
	struct ibc_harness_op slows[] = {
		{ .variant = "slow", .arg = &slow, .setup = f_setup, .run = f_run },
		{ .variant = "slow2", .arg = &slow2, .setup = f_setup, .run = f_run },
	};
	struct ibc_harness_op mids[] = {
		{ .variant = "mid", .arg = &mid, .setup = f_setup, .run = f_run },
		{ .variant = "mid2", .arg = &mid2, .setup = f_setup, .run = f_run },
	};
	struct ibc_harness_params p;
	struct ibc_boot *b;
	struct ibc_csv_table *t = NULL;
	char dir[64] = "/tmp/ibc-single-XXXXXX", path[128];
	size_t i;
	long r, r2;
	int rc, all_cols = 1;
	long iters, warm;

	tap_plan(36);
	/* before the first point: the harness reads IBC_SLOWDOWN once */
	setenv("IBC_SLOWDOWN", "fixed-slow:100", 1);
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp failed");
	tap_is_int(ibc_boot_open("single", 1, &b), IBC_OK, "single bootstrap opens");
	tap_is_int(b->size, 1, "one rank");

	ibc_harness_params_init(&p);
	p.suite = "harness-single";
	p.out_dir = dir;
	p.xport = "shm";
	p.iters = 60;
	p.warmup = 0;
	p.sizes[0] = 0;
	p.sizes[1] = 64;
	p.nsizes = 2;
	p.validate = 1;
	p.print_rows = 0;
	p.pin = 0;
	p.factor_refs[0] = "fixed-ref";
	p.nfactor_refs = 1;
	rc = ibc_harness_run(b, &p, ops, 3);
	tap_is_int(rc, IBC_OK, "harness run succeeds");
	tap_is_int(spin.validated, 2, "validate called once per point");

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	rc = ibc_csv_read(path, &t);
	tap_is_int(rc, IBC_OK, "results.csv reads back through ibc_csv_read");
	if (rc != IBC_OK)
		tap_bail_out("no results.csv");
	for (i = 0; i < sizeof(design_columns) / sizeof(design_columns[0]); i++)
		if (ibc_csv_column(t, design_columns[i]) < 0) {
			tap_diag("missing column %s", design_columns[i]);
			all_cols = 0;
		}
	tap_ok(all_cols, "every docs/design.md column is present");
	tap_is_int((long long)t->nrows - 1, 4, "two variants x two sizes = 4 rows (unsupported skipped)");
	tap_ok(row_of(t, "unsupported", NULL) < 0, "an unsupported setup gives no row");
	r = row_of(t, "spin", "0");
	r2 = row_of(t, "fixed-ref", "64");
	tap_ok(r >= 0 && r2 >= 0, "rows for spin@0 and fixed-ref@64");
	if (r < 0 || r2 < 0)
		tap_bail_out("rows missing");
	/* spin: 100/150/200 us in equal thirds: median 150, min >= 100, max >= 200 */
	tap_is_double_within(num(t, r, "p50_us"), 150, 40, "spin median ~150 us (%.2f)", num(t, r, "p50_us"));
	tap_ok(num(t, r, "min_us") >= 99.5, "spin min >= 100 us (%.2f)", num(t, r, "min_us"));
	tap_ok(num(t, r, "max_us") >= 199.5, "spin max >= 200 us (%.2f)", num(t, r, "max_us"));
	/* the mean keeps every tail (a preempted iteration on this shared VM can
	 * take tens of ms), so only bound it from below and by max */
	tap_ok(num(t, r, "mean_us") >= 145 && num(t, r, "mean_us") <= num(t, r, "max_us") &&
	       num(t, r, "p99_us") >= 195, "spin mean %.2f >= 150 - noise, <= max; p99 %.2f >= 200 - noise",
	       num(t, r, "mean_us"), num(t, r, "p99_us"));
	tap_ok(num(t, r, "stdev_us") > 30, "spin stdev > 30 us (%.2f; exact 41)", num(t, r, "stdev_us"));
	tap_ok(num(t, r, "ci_lo_us") <= num(t, r, "p50_us") && num(t, r, "p50_us") <= num(t, r, "ci_hi_us"),
	       "median inside its confidence interval");
	tap_is_double_within(num(t, r, "skew_us"), 0, 1e-9, "one rank: skew 0");
	tap_is_str(ibc_csv_cell(t, r, "fanin"), "3", "fanin column");
	tap_is_str(ibc_csv_cell(t, r, "iters"), "60", "iters column");
	tap_is_str(ibc_csv_cell(t, r, "launcher"), "single", "launcher defaults to the bootstrap");
	tap_is_str(ibc_csv_cell(t, r, "xport"), "shm", "xport column");
	tap_ok(strstr(ibc_csv_cell(t, r, "extra"), "retransmits=3;note=a,b") != NULL &&
	       strstr(ibc_csv_cell(t, r, "extra"), "valid=1") != NULL &&
	       strstr(ibc_csv_cell(t, r, "extra"), "rank_mean_us=") != NULL,
	       "extra holds the op's counters, valid=1 and rank_mean_us (%s)", ibc_csv_cell(t, r, "extra"));
	tap_is_double_within(num(t, r2, "p50_us"), 20, 1e-9, "scale 0.5 and sample_set: 40 -> 20 us");
	tap_is_str(ibc_csv_cell(t, r2, "impl"), "openmpi", "impl column");
	tap_ok(strstr(ibc_csv_cell(t, r, "extra"), "factor_vs_fixed_ref=") != NULL,
	       "factor_vs_fixed_ref in extra");
	ibc_csv_table_free(t);

	/* a failing validation: IBC_ERR_VALIDATE, row marked valid=0 (appended) */
	p.nsizes = 1;
	rc = ibc_harness_run(b, &p, &op_bad, 1);
	tap_is_int(rc, IBC_ERR_VALIDATE, "failed validation fails the run");
	rc = ibc_csv_read(path, &t);
	r = rc == IBC_OK ? row_of(t, "bad", NULL) : -1;
	tap_ok(r >= 0 && strstr(ibc_csv_cell(t, r, "extra"), "valid=0") != NULL,
	       "its row is appended and marked valid=0");
	if (rc == IBC_OK)
		ibc_csv_table_free(t);

	/* IBC_SLOWDOWN=fixed-slow:100 (set above): an operation that sets its own
	 * sample has it made 100% longer, 40 -> 80 us */
	rc = ibc_harness_run(b, &p, &op_fslow, 1);
	rc = rc == IBC_OK ? ibc_csv_read(path, &t) : rc;
	r = rc == IBC_OK ? row_of(t, "fixed-slow", NULL) : -1;
	tap_ok(r >= 0 && fabs(num(t, r, "p50_us") - 80) < 1e-9,
	       "IBC_SLOWDOWN=fixed-slow:100 on a sample_set(40) operation: p50 80 us (%g)",
	       r >= 0 ? num(t, r, "p50_us") : -1.0);
	if (rc == IBC_OK)
		ibc_csv_table_free(t);

	/* the time budget cuts a 2 ms operation to ~0.05 s */
	p.iters = 1000;
	p.warmup = 5;
	p.budget_s = 0.05;
	p.validate = 0;
	rc = ibc_harness_run(b, &p, &op_slow, 1);
	rc = rc == IBC_OK ? ibc_csv_read(path, &t) : rc;
	r = rc == IBC_OK ? row_of(t, "slow", NULL) : -1;
	iters = r >= 0 ? (long)num(t, r, "iters") : -1;
	tap_ok(iters >= 10 && iters < 100, "time budget: %ld of 1000 iterations", iters);
	if (rc == IBC_OK)
		ibc_csv_table_free(t);

	/* two 200 us operations in one group, each timed iteration primed: a
	 * round costs 4 of them, so a 0.1 s budget plans at most 125 rounds
	 * (250 if the plan forgot the primes; a loaded host only lowers it).
	 * The calls are counted against the row's warmup: a first warm-up
	 * iteration preempted on a loaded host caps the warm-up at a fifth of
	 * the budget, fewer than the 5 asked for. */
	p.budget_s = 0.1;
	p.sync_mode = IBC_HARNESS_SYNC_BARRIER;
	rc = ibc_harness_run(b, &p, mids, 2);
	rc = rc == IBC_OK ? ibc_csv_read(path, &t) : rc;
	r = rc == IBC_OK ? row_last(t, "mid2") : -1;
	iters = r >= 0 ? (long)num(t, r, "iters") : -1;
	warm = r >= 0 ? (long)num(t, r, "warmup") : -1;
	tap_ok(r >= 0 && strstr(ibc_csv_cell(t, r, "extra"), "primed=1") != NULL,
	       "two 0.2 ms operations in one group: primed");
	tap_ok(iters >= 10 && iters <= 160, "... the budget plans for the primes: %ld rounds in 0.1 s", iters);
	tap_is_int(mid2.calls, warm + 2 * iters, "... run() called for the warm-up (%ld), each prime and "
		   "each timed iteration", warm);
	if (rc == IBC_OK)
		ibc_csv_table_free(t);

	/* a suite that asks for no primes (logp: the model's kernels) gets none */
	p.unprimed = "a test";
	mid2.calls = 0;
	rc = ibc_harness_run(b, &p, mids, 2);
	rc = rc == IBC_OK ? ibc_csv_read(path, &t) : rc;
	r = rc == IBC_OK ? row_last(t, "mid2") : -1;
	iters = r >= 0 ? (long)num(t, r, "iters") : -1;
	warm = r >= 0 ? (long)num(t, r, "warmup") : -1;
	tap_ok(r >= 0 && strstr(ibc_csv_cell(t, r, "extra"), "primed") == NULL && mid2.calls == warm + iters,
	       "params.unprimed: the same two operations, not primed (%ld calls, %ld warm-up, %ld timed)",
	       mid2.calls, warm, iters);
	if (rc == IBC_OK)
		ibc_csv_table_free(t);

	/* ... but for an operation that asks for primes (logp's os-write-user-all) */
	mids[1].primed = 1;
	mid.calls = mid2.calls = 0;
	rc = ibc_harness_run(b, &p, mids, 2);
	rc = rc == IBC_OK ? ibc_csv_read(path, &t) : rc;
	r = rc == IBC_OK ? row_last(t, "mid2") : -1;
	r2 = rc == IBC_OK ? row_last(t, "mid") : -1;
	iters = r >= 0 ? (long)num(t, r, "iters") : -1;
	warm = r >= 0 ? (long)num(t, r, "warmup") : -1;
	tap_ok(r >= 0 && r2 >= 0 && strstr(ibc_csv_cell(t, r, "extra"), "primed=1") != NULL &&
	       mid2.calls == warm + 2 * iters && strstr(ibc_csv_cell(t, r2, "extra"), "primed") == NULL &&
	       mid.calls == warm + iters,
	       "params.unprimed, op.primed: that operation primed (%ld calls, %ld warm-up, %ld timed), "
	       "the other not (%ld calls)", mid2.calls, warm, iters, mid.calls);
	if (rc == IBC_OK)
		ibc_csv_table_free(t);
	mids[1].primed = 0;
	p.unprimed = NULL;

	/* operations of a millisecond or more are primed too (a prime that
	 * stopped at a length came and went with a slowdown, and compare
	 * cannot judge a row primed on one side only) */
	p.iters = 5;
	p.warmup = 1;
	p.budget_s = 0;
	rc = ibc_harness_run(b, &p, slows, 2);
	rc = rc == IBC_OK ? ibc_csv_read(path, &t) : rc;
	r = rc == IBC_OK ? row_last(t, "slow2") : -1;
	tap_ok(r >= 0 && strstr(ibc_csv_cell(t, r, "extra"), "primed=1") != NULL && slow2.calls == 11,
	       "two 2 ms operations in one group: primed (%ld calls: 1 warm-up, 5 primes, 5 timed)",
	       slow2.calls);
	if (rc == IBC_OK)
		ibc_csv_table_free(t);
	p.sync_mode = IBC_HARNESS_SYNC_AUTO;

	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	rc = ibc_csv_read(path, &t);
	tap_ok(rc == IBC_OK && ibc_csv_column(t, "key") == 0 && t->nrows > 20,
	       "meta.csv holds key,value provenance");
	if (rc == IBC_OK)
		ibc_csv_table_free(t);
	tap_is_int(ibc_boot_close(b), IBC_OK, "close");
	unlink(path);
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
