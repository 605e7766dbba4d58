/* The measurement engine (see harness.h): parameters, a point's warm-up,
 * budget and interleaved timed loop, the run.  How iterations start is in
 * window.c, rank 0's statistics and rows in rows.c. */
#include "harness/harness_priv.h"
#include "harness/meta.h"
#include "core/csv.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MIN_BUDGET_ITERS 10

/* ------------------------------------------------------------ params ---- */
void ibc_harness_params_init(struct ibc_harness_params *p)
{
	memset(p, 0, sizeof(*p));
	p->xport = "none";
	p->device = "none";
	p->kind = IBC_HARNESS_COLLECTIVE;
	p->nsizes = 1;
	p->sizes[0] = 0;
	p->iters = 0;
	p->warmup = -1;
	p->budget_s = 10.0;
	p->pin = 1;
	p->wait_force = -1;
	p->append = 1;
	p->print_rows = 1;
	p->progress = 1;
	p->probe = ibc_harness_probe_default;
	p->sync_mode = IBC_HARNESS_SYNC_AUTO;
}

const char *const ibc_harness_sync_names[] = {
	[IBC_HARNESS_SYNC_AUTO] = "auto", [IBC_HARNESS_SYNC_WINDOW] = "window",
	[IBC_HARNESS_SYNC_BARRIER] = "barrier", NULL
};

void ibc_harness_params_argv(struct ibc_harness_params *p, int argc, char **argv)
{
	size_t used = 0;
	int i, n;

	p->command_buf[0] = '\0';
	for (i = 0; i < argc && used < sizeof(p->command_buf); i++) {
		n = snprintf(p->command_buf + used, sizeof(p->command_buf) - used, "%s%s",
			     i ? " " : "", argv[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	p->command = p->command_buf;
}

void ibc_harness_defaults(enum ibc_harness_kind kind, size_t bytes, long *iters, long *warmup)
{
	int large = bytes > 8192;

	if (kind == IBC_HARNESS_LATENCY) {
		*iters = large ? 1000 : 10000;
		*warmup = large ? 10 : 100;
	} else {
		*iters = large ? 100 : 1000;
		*warmup = large ? 10 : 100;
	}
}

/* ----------------------------------------------------------- getters ---- */
struct ibc_boot *ibc_harness_boot(const struct ibc_harness *h) { return h->boot; }
enum ibc_wait ibc_harness_wait_get(const struct ibc_harness *h) { return h->wait; }
int ibc_harness_oversubscribed(const struct ibc_harness *h) { return h->oversub; }
void ibc_harness_sample_set(struct ibc_harness *h, double us) { h->sample_override = us; }
void ibc_harness_sample_end(struct ibc_harness *h) { h->sample_end_us = ibc_timer_now_us(); }
enum ibc_harness_call ibc_harness_call(const struct ibc_harness *h) { return h->call; }

/* ------------------------------------------------------------ points ---- */
/* IBC_SLOWDOWN=VARIANT:PCT makes every iteration of VARIANT (every variant
 * for *, but those of a suite that measures the machine) PCT percent longer
 * (a busy wait after it, on every rank, of PCT percent of the shortest
 * iteration this rank has seen: a stretch of each iteration's own length
 * would feed back, back to back, through the peers' waits for it); an
 * operation that times part of what it does (sample_set) has that sample
 * made PCT percent longer, as the wait is not in it. */
double ibc_harness_slowdown_pct(const char *variant, int star)
{
	static int parsed;
	static char name[64];
	static double pct;

	if (!parsed) {
		const char *e = getenv("IBC_SLOWDOWN"), *colon = e ? strrchr(e, ':') : NULL;

		parsed = 1;
		if (colon != NULL && (size_t)(colon - e) < sizeof(name)) {
			memcpy(name, e, (size_t)(colon - e));
			name[colon - e] = '\0';
			pct = strtod(colon + 1, NULL);
		}
	}
	return pct > 0 && (strcmp(variant, name) == 0 || (star && strcmp(name, "*") == 0)) ? pct : 0;
}

double ibc_harness_slowdown_spin(double since_us, double pct, double *shortest_us)
{
	double now = ibc_timer_now_us(), until;

	if (*shortest_us <= 0 || now - since_us < *shortest_us)
		*shortest_us = now - since_us;
	until = now + *shortest_us * pct / 100;

	while ((now = ibc_timer_now_us()) < until)
		;
	return now;
}

static double op_scale(const struct ibc_harness_op *op)
{
	return op->scale > 0 ? op->scale : 1.0;
}

double ibc_harness_sample_from(const struct ibc_harness_op *op, int window, double start_us)
{
	return window && op->timing == IBC_HARNESS_TIME_ROOT ? ibc_timer_now_us() : start_us;
}

/* What an iteration is for: the warm-up (its time kept for the groups and
 * the windows), a prime (untimed, ops_timed_group) or a sample. */
enum iter_kind { ITER_WARM = IBC_HARNESS_CALL_WARM, ITER_PRIME = IBC_HARNESS_CALL_PRIME,
		 ITER_TIMED = IBC_HARNESS_CALL_TIMED };

/* one iteration of op k: prepare, sync (or, in window mode, a prime's or a
 * sample's window: a prime has a window of its own, so that it is as far
 * from its timed iteration as two timed iterations of a lone operation, and
 * as safe: copy-peer's writer does not wait for its reader), run; timed
 * (its time to *sample) when kind is ITER_TIMED */
static int iteration(struct ibc_harness *h, struct op_state *s, enum iter_kind kind, double *sample,
		     int first_of_block)
{
	const struct ibc_harness_op *op = s->op;
	double t0, t1, ts, from;
	int rc;

	if (op->prepare != NULL) {
		rc = op->prepare(h, op->arg);
		if (rc != IBC_OK) {
			ibc_error("harness: %s: prepare failed: %s", op->variant, ibc_status_str(rc));
			return rc;
		}
	}
	h->win_late = 0;
	if (h->window && kind != ITER_WARM) {
		rc = ibc_harness_window_wait(h, s, first_of_block, &t0);
		if (rc != IBC_OK) {
			ibc_error("harness: waiting for %s's window: %s", op->variant, ibc_status_str(rc));
			return rc;
		}
	} else {
		rc = ibc_harness_sync(h);
		if (rc != IBC_OK) {
			ibc_error("harness: sync before %s failed: %s", op->variant, ibc_status_str(rc));
			return rc;
		}
		t0 = ibc_timer_now_us();
	}
	h->sample_override = -1;
	h->sample_end_us = 0;
	from = ibc_harness_sample_from(op, h->window && kind == ITER_TIMED, t0);
	ts = s->slow_pct > 0 ? ibc_timer_now_us() : 0;
	h->call = (enum ibc_harness_call)kind;
	rc = op->run(h, op->arg);
	h->call = IBC_HARNESS_CALL_OTHER;
	t1 = h->sample_end_us > 0 ? h->sample_end_us : ibc_timer_now_us();
	if (rc == IBC_OK && ts > 0) /* the operation made slower on purpose */
		t1 = ibc_harness_slowdown_spin(ts, s->slow_pct, &s->slow_min_us);
	if (rc != IBC_OK) {
		ibc_error("harness: %s: iteration failed: %s", op->variant, ibc_status_str(rc));
		return rc;
	}
	if (kind == ITER_PRIME)
		return IBC_OK;
	if (kind == ITER_WARM) {
		s->warm[s->nwarm++] = t1 - t0;
		return IBC_OK;
	}
	if (h->window && !h->win_late && s->dur != NULL && s->ndur < WINDOW_BLOCK_MAX)
		s->dur[s->ndur++] = t1 - t0;
	*sample = (h->sample_override >= 0 ? h->sample_override * (1 + s->slow_pct / 100) : t1 - from) *
		  op_scale(op);
	if (h->win_late) {
		/* marked by the sign: the reduction (rows.c) drops the iteration for every rank */
		s->late++;
		*sample = -*sample - 1;
	}
	return IBC_OK;
}

/* Frees a point's per-operation memory; teardown (collective) only when
 * every rank got here in step (after a failure the job is aborted and
 * nothing collective may run). */
static void ops_release(struct ibc_harness *h, struct op_state *st, size_t n, int teardown)
{
	size_t k;
	int rc;

	for (k = 0; k < n; k++) {
		if (teardown && st[k].active && st[k].op->teardown != NULL) {
			rc = st[k].op->teardown(h, st[k].op->arg);
			if (rc != IBC_OK)
				ibc_warn("harness: %s: teardown: %s", st[k].op->variant, ibc_status_str(rc));
		}
		st[k].active = 0;
		free(st[k].samples);
		free(st[k].all);
		free(st[k].warm);
		free(st[k].dur);
		free(st[k].kept_samples);
		st[k].samples = st[k].all = st[k].warm = st[k].dur = st[k].kept_samples = NULL;
		st[k].nwarm = 0;
	}
	h->nst = 0;
}

/* fails the job fast so peers blocked in an operation do not hang */
static int run_fail(struct ibc_harness *h, int rc, const char *what)
{
	if (h->boot->size > 1)
		ibc_boot_abort(h->boot, rc, what);
	return rc;
}

/* every active operation's timed_begin / timed_end */
static int ops_timed_mark(struct ibc_harness *h, struct op_state *st, size_t n, int end)
{
	size_t k;
	int rc;

	for (k = 0; k < n; k++) {
		const struct ibc_harness_op *op = st[k].op;
		int (*fn)(struct ibc_harness *, void *) = end ? op->timed_end : op->timed_begin;

		if (!st[k].active || fn == NULL)
			continue;
		rc = fn(h, op->arg);
		if (rc != IBC_OK) {
			ibc_error("harness: %s: %s failed: %s", op->variant,
				  end ? "timed_end" : "timed_begin", ibc_status_str(rc));
			return rc;
		}
	}
	return IBC_OK;
}

/* Operations are timed interleaved only with operations of about their own
 * duration: a lone operation after a long quiet gap finds its code and data
 * out of the caches (Soft-RoCE under TCG: a write-lat round 66 us back to
 * back, 128 us 2 ms after the last, 243 us 20 ms after; one host syscall
 * 2x slower 30 ms after the last), so a ping-pong timed between the
 * iterations of a 20 ms stream measures the stream's gap, not itself.
 * Rank 0 sorts the operations by d (the warm-up medians) and starts a new
 * group where one takes more than GROUP_RATIO times the group's first, or
 * than GROUP_RATIO * GROUP_FLOOR_US if more (gaps of a few hundred us cost
 * little; the floor keeps sub-microsecond operations, whose ratios are
 * noise, together; with 100 us, a 0.9 ms write-bw-burst stayed among the
 * rxe ping-pongs and held write-lat at 73 us per iteration: 37 apart, 33.5
 * alone);
 * groups run one after the other, fastest first.
 *
 * Within a group of several, each timed iteration follows an untimed one of
 * its own operation (its prime), so that what it finds in the caches and
 * the branch predictors is its own, as in a run of that variant alone, not
 * what the other variants of the group left: otherwise a row's figure
 * depends on which variants ran beside it (shm, piggyback 8 B, cores far:
 * p50 0.295-0.305 us among the channel suite's 27 variants, 0.205-0.220
 * beside probe-write alone; primed, 0.195-0.210 and 0.190-0.205).  Whatever
 * the operation's length: a prime that stopped at a length (1 ms, as it
 * once did) came and went with a slowdown or the noise of the warm-up's
 * medians, and compare cannot judge a row primed on one side only (a
 * Soft-RoCE run of the suites 2x slower lost 11 of its 51 verdicts so,
 * docs/measurements.md).  A prime of a long operation costs the point
 * time (under a budget, samples), not accuracy.  An operation timed alone in
 * its group needs none: each timed iteration follows its own last one, what
 * a prime gives, and its rows say primed=1 too (a row moved between a group
 * of its own and a group of several by the noise was another row that
 * compare could not judge). */
#define GROUP_RATIO 10.0
#define GROUP_FLOOR_US 20.0

static int ops_group(struct ibc_harness *h, struct op_state *st, size_t n, const double *d)
{
	/* grp[k]: op k's group, grp[n]: the number of groups, grp[n + 1 + k]:
	 * 1 op k primed, 2 op k alone in its group */
	int *grp = calloc(2 * n + 1, sizeof(int)), rc = IBC_OK, g;
	char *taken = calloc(n, 1);
	size_t k, best;

	if (grp == NULL || taken == NULL)
		rc = IBC_ERR_NOMEM;
	if (rc == IBC_OK && h->boot->rank == 0) {
		double base = -1;

		/* selection by d, ties in table order; grp[n] the current group */
		for (;;) {
			for (best = n, k = 0; k < n; k++)
				if (st[k].active && !taken[k] && (best == n || d[k] < d[best]))
					best = k;
			if (best == n)
				break;
			taken[best] = 1;
			if (base < 0) {
				base = d[best];
			} else if (d[best] > GROUP_RATIO * fmax(base, GROUP_FLOOR_US)) {
				grp[n]++;
				base = d[best];
			}
			grp[best] = grp[n];
		}
		grp[n]++;
		for (k = 0; k < n; k++) {
			size_t j, members = 0;

			for (j = 0; j < n; j++)
				members += st[j].active && grp[j] == grp[k];
			if (st[k].active && members == 1)
				grp[n + 1 + k] = 2;
			else
				grp[n + 1 + k] = st[k].active &&
						 (h->p->unprimed == NULL || st[k].op->primed);
		}
	}
	if (rc == IBC_OK)
		rc = ibc_boot_bcast(h->boot, grp, (2 * n + 1) * sizeof(int), 0);
	if (rc == IBC_OK) {
		for (k = 0; k < n; k++) {
			st[k].group = grp[k];
			st[k].prime = grp[n + 1 + k] == 1;
			st[k].alone = grp[n + 1 + k] == 2;
		}
		h->ngroups = grp[n];
		h->group = 0;
	}
	for (g = 0; rc == IBC_OK && h->boot->rank == 0 && grp[n] > 1 && g < grp[n]; g++) {
		char names[512] = "";
		size_t len = 0;

		for (k = 0; k < n && len < sizeof(names); k++)
			if (st[k].active && st[k].group == g)
				len += (size_t)snprintf(names + len, sizeof(names) - len, " %s (%.3g us)",
							st[k].op->variant, d[k]);
		ibc_info("harness: %s: timed group %d of %d, interleaved:%s", h->p->suite, g + 1,
			 grp[n], names);
	}
	free(grp);
	free(taken);
	return rc;
}

/* The timed loop of the current group (h->group): its operations
 * interleaved and rotated, so none always runs first or right after the same
 * neighbour (position effects cancel); window mode anchors a block at a
 * time, so one late start does not make the following ones late too.
 * *done: the rounds run (fewer when the budget ran out in the windows). */
static int ops_timed_group(struct ibc_harness *h, struct op_state *st, size_t n, long iters,
			   long *done)
{
	size_t *mem = malloc(n * sizeof(size_t)), m = 0, j, k;
	long i, round;
	int rc = mem == NULL ? IBC_ERR_NOMEM : IBC_OK;

	for (k = 0; rc == IBC_OK && k < n; k++)
		if (st[k].active && st[k].group == h->group)
			mem[m++] = k;
	for (i = 0, round = 0; rc == IBC_OK && i < iters; i++, round++) {
		int first = 0;

		if (h->window && (i == 0 || round == h->block_rounds)) {
			rc = ibc_harness_window_anchor(h, i == 0 && h->group == 0);
			if (rc != IBC_OK || (h->win_stop && i >= MIN_BUDGET_ITERS))
				break; /* every rank: the anchor was collective */
			round = 0;
			first = 1;
		}
		for (j = 0; j < m && rc == IBC_OK; j++, first = 0) {
			k = mem[(j + (size_t)i) % m];
			if (st[k].prime) {
				rc = iteration(h, &st[k], ITER_PRIME, NULL, first);
				first = 0;
			}
			if (rc == IBC_OK)
				rc = iteration(h, &st[k], ITER_TIMED, &st[k].samples[i], first);
		}
	}
	free(mem);
	*done = i;
	return rc;
}

/* A round's time with the primes over its time without them (rank 0: d
 * the warm-up's medians) */
static double primed_share(const struct op_state *st, size_t n, const double *d)
{
	double all = 0, primed = 0;
	size_t k, np = 0;

	for (k = 0; k < n; k++) {
		if (!st[k].active)
			continue;
		all += d[k];
		primed += st[k].prime ? 2 * d[k] : d[k];
		np += (size_t)st[k].prime;
	}
	return all > 0 ? primed / all : np > 0 ? 2.0 : 1.0;
}

/* The step of a point this rank is at, for the runner (core/progress.h) */
static void point_step(int index, const struct op_state *st, size_t n, size_t bytes, const char *step)
{
	char what[32];

	if (n == 1)
		snprintf(what, sizeof(what), "%s", st[0].op->variant);
	else
		snprintf(what, sizeof(what), "%zu variants", n);
	ibc_progress_step((unsigned)index + 1, what, bytes, step);
}

/* One point; *again (auto only): every iteration of an operation started
 * late, nothing was written, the point is to be measured at a barrier. */
static int point_run(struct ibc_harness *h, int index, struct op_state *st, size_t n,
		     int *validate_failed, int *again)
{
	const struct ibc_harness_params *p = h->p;
	struct ibc_boot *b = h->boot;
	struct ibc_harness_point pt = { 0 };
	long iters, warmup, i, want, done, planned;
	size_t k, nactive = 0;
	int rc, agreed, g;
	double t_start, per_iter, elapsed, budget_end, *d = NULL;
	const char *what = "a measurement step failed";

	pt.index = index;
	pt.bytes = p->sizes[index];
	ibc_harness_defaults(p->kind, pt.bytes, &iters, &warmup);
	if (p->iters > 0)
		iters = p->iters;
	if (p->warmup >= 0)
		warmup = p->warmup;
	pt.iters = iters;
	pt.warmup = warmup;
	pt.runs_max = warmup + 2 * iters;
	planned = iters;
	h->st = st;
	h->nst = n;

	for (k = 0; k < n; k++) {
		point_step(index, &st[k], 1, pt.bytes, "setup");
		rc = st[k].op->setup != NULL ? st[k].op->setup(h, &pt, st[k].op->arg) : IBC_OK;
		if (ibc_boot_agree(b, rc, &agreed) != IBC_OK)
			return run_fail(h, IBC_ERR_CLOSED, "setup status exchange failed");
		if (agreed == IBC_ERR_UNSUPPORTED) {
			if (rc == IBC_OK && st[k].op->teardown != NULL)
				st[k].op->teardown(h, st[k].op->arg);
			if (b->rank == 0)
				ibc_info("harness: %s: not supported at %zu bytes here; skipped",
					 st[k].op->variant, pt.bytes);
			continue;
		}
		if (agreed != IBC_OK) {
			if (rc == IBC_OK && st[k].op->teardown != NULL)
				st[k].op->teardown(h, st[k].op->arg);
			if (b->rank == 0)
				ibc_error("harness: %s: setup failed: %s", st[k].op->variant,
					  ibc_status_str(agreed));
			ops_release(h, st, n, 1); /* every rank agreed: orderly */
			return agreed;
		}
		st[k].active = 1;
		st[k].valid = -1;
		st[k].late = 0;
		st[k].extra[0] = '\0';
		st[k].warm = calloc((size_t)warmup + 1, sizeof(double));
		st[k].nwarm = 0;
		st[k].group = 0;
		st[k].slow_pct = ibc_harness_slowdown_pct(st[k].op->variant, !p->measures_machine);
		st[k].slow_min_us = 0;
		if (st[k].warm == NULL) {
			rc = IBC_ERR_NOMEM;
			goto err_abort;
		}
		nactive++;
	}
	if (nactive == 0)
		return IBC_OK;
	h->worst_late = 0;
	point_step(index, st, n, pt.bytes, "warm-up");

	/* warm-up (sync step before each iteration), timed as a whole to fit
	 * the budget; its first iteration alone caps the warm-up itself at a
	 * fifth of the budget */
	t_start = ibc_timer_now_us();
	h->budget_end_us = p->budget_s > 0 ? t_start + p->budget_s * 1e6 : 0;
	h->win_stop = 0;
	if (warmup > 0 && p->budget_s > 0) {
		for (k = 0; k < n; k++)
			if (st[k].active && (rc = iteration(h, &st[k], ITER_WARM, NULL, 0)) != IBC_OK)
				goto err_abort;
		want = warmup;
		per_iter = ibc_timer_now_us() - t_start;
		if (b->rank == 0 && per_iter * (double)warmup > 0.2 * p->budget_s * 1e6) {
			want = (long)(0.2 * p->budget_s * 1e6 / per_iter);
			if (want < 1)
				want = 1;
		}
		rc = ibc_boot_bcast(b, &want, sizeof(want), 0);
		if (rc != IBC_OK)
			goto err_abort;
		warmup = want;
		pt.warmup = warmup;
	}
	for (i = warmup > 0 && p->budget_s > 0 ? 1 : 0; i < warmup; i++)
		for (k = 0; k < n; k++)
			if (st[k].active && (rc = iteration(h, &st[k], ITER_WARM, NULL, 0)) != IBC_OK)
				goto err_abort;
	elapsed = ibc_timer_now_us() - t_start;
	if ((d = calloc(n, sizeof(double))) == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_abort;
	}
	if ((rc = ibc_harness_warm_medians(h, st, n, d)) != IBC_OK || (rc = ops_group(h, st, n, d)) != IBC_OK)
		goto err_abort;
	want = iters;
	if (b->rank == 0 && p->budget_s > 0 && warmup > 0) {
		per_iter = elapsed / (double)warmup * primed_share(st, n, d);
		if (per_iter * (double)iters > p->budget_s * 1e6) {
			want = (long)(p->budget_s * 1e6 / per_iter);
			if (want < MIN_BUDGET_ITERS)
				want = MIN_BUDGET_ITERS;
			if (want > iters)
				want = iters;
		}
	}
	rc = ibc_boot_bcast(b, &want, sizeof(want), 0);
	if (rc != IBC_OK)
		goto err_abort;
	if (want < iters && b->rank == 0)
		ibc_info("harness: %s point %zu bytes: %ld of %ld iterations fit the %.1f s budget",
			 p->suite, pt.bytes, want, iters, p->budget_s);
	iters = want;

	for (k = 0; k < n; k++) {
		if (!st[k].active)
			continue;
		st[k].samples = calloc((size_t)iters, sizeof(double));
		if (b->rank == 0)
			st[k].all = calloc((size_t)iters * (size_t)b->size, sizeof(double));
		if (st[k].samples == NULL || (b->rank == 0 && st[k].all == NULL)) {
			rc = IBC_ERR_NOMEM;
			ibc_error("harness: no memory for %ld samples", iters);
			goto err_abort;
		}
	}
	if (h->window && (rc = ibc_harness_window_first(h, st, n, d)) != IBC_OK)
		goto err_abort;
	free(d);
	d = NULL;
	if ((rc = ops_timed_mark(h, st, n, 0)) != IBC_OK)
		goto err_abort;
	point_step(index, st, n, pt.bytes, "measure");
	t_start = ibc_timer_now_us();
	budget_end = h->budget_end_us;
	pt.iters = 0;
	for (g = 0; g < h->ngroups; g++) {
		/* window mode: an equal share of what is left of the budget for
		 * each group still to run; a fast group that needs less runs all
		 * its iterations and leaves the rest to the slower ones */
		if (budget_end > 0 && h->window)
			h->budget_end_us = ibc_timer_now_us() +
					   (budget_end - ibc_timer_now_us()) / (h->ngroups - g);
		h->group = g;
		rc = ops_timed_group(h, st, n, iters, &done);
		if (rc != IBC_OK)
			goto err_abort;
		for (k = 0; k < n; k++)
			if (st[k].group == g)
				st[k].iters = done;
		if (done > pt.iters)
			pt.iters = done;
		if (done < iters && b->rank == 0)
			ibc_info("harness: %s point %zu bytes: the %.1f s budget ran out in the windows "
				 "after %ld of %ld iterations%s", p->suite, pt.bytes, p->budget_s, done, iters,
				 h->ngroups > 1 ? " of a timed group" : "");
	}
	elapsed = ibc_timer_now_us() - t_start;
	pt.budget_iters = pt.iters < planned ? pt.iters : 0;
	/* everyone out of the last iteration (a rank still inside an operation
	 * may need the others' progress, e.g. RGM's NAK answered) */
	rc = ibc_harness_sync(h);
	if (rc == IBC_OK)
		rc = ops_timed_mark(h, st, n, 1);
	if (rc != IBC_OK)
		goto err_abort;
	for (k = 0; k < n; k++) {
		if (!st[k].active)
			continue;
		point_step(index, &st[k], 1, pt.bytes, "validate");
		if (p->validate && st[k].op->validate != NULL) {
			int v = st[k].op->validate(h, st[k].op->arg);

			if (ibc_boot_agree(b, v, &agreed) != IBC_OK) {
				rc = IBC_ERR_CLOSED;
				goto err_abort;
			}
			st[k].valid = agreed == IBC_OK;
			if (agreed != IBC_OK) {
				*validate_failed = 1;
				if (b->rank == 0)
					ibc_error("harness: %s %s at %d ranks, %zu bytes: validation failed (%s)",
						  p->suite, st[k].op->variant, b->size, pt.bytes,
						  ibc_status_str(agreed));
			}
		}
		point_step(index, &st[k], 1, pt.bytes, "extra phase");
		if (st[k].op->extra != NULL) {
			/* the extra phase (counters, a back-to-back loop) is part of
			 * the run: its failure is the run's */
			rc = st[k].op->extra(h, st[k].op->arg, st[k].extra, sizeof(st[k].extra));
			if (rc != IBC_OK) {
				ibc_error("harness: %s: extra phase failed: %s", st[k].op->variant,
					  ibc_status_str(rc));
				what = "the extra phase failed";
				goto err_abort;
			}
		}
		if (h->window) {
			double late = (double)st[k].late, *lates = NULL;
			int r;

			if (b->rank == 0 && (lates = calloc((size_t)b->size, sizeof(double))) == NULL) {
				rc = IBC_ERR_NOMEM;
				goto err_abort;
			}
			rc = ibc_boot_gather(b, &late, lates, sizeof(double), 0);
			if (rc == IBC_OK && b->rank == 0)
				for (st[k].late = 0, r = 0; r < b->size; r++)
					st[k].late += (long)lates[r];
			free(lates);
			if (rc != IBC_OK)
				goto err_abort;
		}
		point_step(index, &st[k], 1, pt.bytes, "gather");
		rc = ibc_harness_samples_gather(b, st[k].samples, st[k].all, (size_t)st[k].iters);
		if (rc != IBC_OK)
			goto err_abort;
		if (b->rank == 0 && (rc = ibc_harness_reduce(h, &st[k], st[k].iters)) != IBC_OK)
			goto err_abort;
	}
	if (h->window) {
		/* every iteration of an operation late: no row can be written;
		 * auto measures the point again at a barrier, window fails */
		int redo = 0;

		for (k = 0; b->rank == 0 && k < n; k++)
			if (st[k].active && st[k].kept == 0) {
				ibc_error("harness: %s: every iteration started late in its window "
					  "(W %.2f us)%s%s", st[k].op->variant, st[k].win_us,
					  h->oversub ? " (more ranks than PUs: they cannot all be "
						       "running at a common start)" : "",
					  p->sync_mode == IBC_HARNESS_SYNC_AUTO ?
						  "; measuring the point again at a barrier" : "");
				redo = 1;
			}
		if ((rc = ibc_boot_bcast(b, &redo, sizeof(redo), 0)) != IBC_OK)
			goto err_abort;
		if (redo) {
			ops_release(h, st, n, 1);
			*again = p->sync_mode == IBC_HARNESS_SYNC_AUTO;
			return *again ? IBC_OK : IBC_ERR_TIMEOUT;
		}
	}
	if (b->rank == 0) {
		for (k = 0; k < n; k++) {
			if (!st[k].active)
				continue;
			rc = ibc_harness_row_write(h, &st[k], st, n, &pt);
			if (rc != IBC_OK)
				goto err_abort;
		}
		if (p->progress)
			ibc_harness_point_line(h, st, n, index, &pt, elapsed);
	}
	ops_release(h, st, n, 1);
	return IBC_OK;

err_abort:
	/* abort first: a peer may be blocked in an operation or a collective
	 * that this rank will never enter; then free, without collective
	 * teardown */
	rc = run_fail(h, rc, what);
	ops_release(h, st, n, 0);
	free(d);
	return rc;
}

/* --------------------------------------------------------------- run ---- */
/* Auto leaves window mode: points 1..until (1-based) ran in it, the rest run
 * at a barrier; the reason goes to sync_why, the log and meta.csv's
 * sync_fallback. */
static void window_off(struct ibc_harness *h, int until, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void window_off(struct ibc_harness *h, int until, const char *fmt, ...)
{
	char why[192], path[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	h->window = 0;
	snprintf(h->sync_why, sizeof(h->sync_why), "window mode until point %d, then barrier: %s",
		 until, why);
	if (h->boot->rank == 0) {
		ibc_warn("harness: %s", h->sync_why);
		snprintf(path, sizeof(path), "%s/meta.csv", h->p->out_dir);
		(void)ibc_harness_meta_append(path, "sync_fallback", h->sync_why);
	}
}

static void run_id_make(const struct ibc_harness_params *p, char *buf, size_t cap)
{
	const char *env = getenv("IBC_RUN_ID");
	time_t now = time(NULL);
	struct tm tm;

	if (p->run_id != NULL && p->run_id[0] != '\0') {
		snprintf(buf, cap, "%s", p->run_id);
	} else if (env != NULL && env[0] != '\0') {
		snprintf(buf, cap, "%s", env);
	} else {
		gmtime_r(&now, &tm);
		snprintf(buf, cap, "%04d%02d%02dT%02d%02d%02dZ-%d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
	}
}

/* Rank 0 and the next rank of node 0, in their current placement (the probe
 * measures the placement, it does not change it). */
int ibc_harness_probe_default(struct ibc_harness *h, void *arg, double *us)
{
	struct ibc_boot *b = ibc_harness_boot(h);
	struct ibc_probe *p;
	int *info, r, peer = -1, rc;
	double v = -1;

	(void)arg;
	*us = -1;
	if (b->size < 2)
		return IBC_ERR_UNSUPPORTED;
	info = malloc(sizeof(int) * (size_t)b->size);
	if (info == NULL)
		return IBC_ERR_NOMEM;
	rc = ibc_boot_allgather(b, &b->node_id, info, sizeof(int));
	for (r = 1; rc == IBC_OK && r < b->size; r++)
		if (info[r] == info[0]) {
			peer = r;
			break;
		}
	free(info);
	if (rc != IBC_OK)
		return rc;
	if (peer < 0)
		return IBC_ERR_UNSUPPORTED;
	rc = ibc_probe_open(b, 0, peer, &p);
	if (rc != IBC_OK)
		return rc;
	rc = ibc_probe_measure(p, 1000, ibc_probe_yield(ibc_harness_wait_get(h)), &v);
	ibc_probe_close(p);
	if (ibc_boot_bcast(b, &v, sizeof(v), 0) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_CLOSED;
	if (ibc_boot_barrier(b) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_CLOSED;
	*us = v;
	return rc;
}

static int probe_call(struct ibc_harness *h, double *us)
{
	int rc;

	*us = -1;
	if (h->p->probe == NULL)
		return IBC_OK;
	rc = h->p->probe(h, h->p->probe_arg, us);
	if (rc != IBC_OK && rc != IBC_ERR_UNSUPPORTED) {
		if (h->boot->rank == 0)
			ibc_warn("harness: placement probe failed: %s", ibc_status_str(rc));
	}
	return rc == IBC_ERR_UNSUPPORTED ? IBC_OK : rc;
}

int ibc_harness_run(struct ibc_boot *boot, const struct ibc_harness_params *p,
		    const struct ibc_harness_op *ops, size_t n)
{
	struct ibc_harness h;
	struct op_state *st = NULL;
	char path[4200];
	size_t k;
	int rc = IBC_OK, rc2, agreed, validate_failed = 0, i, pin_rc = IBC_OK;
	double probe_end = -1;

	if (p->suite == NULL || p->out_dir == NULL || n == 0 || p->nsizes == 0 ||
	    p->nsizes > IBC_HARNESS_MAX_SIZES) {
		ibc_error("harness: suite, out_dir, operations and 1..%d sizes are required",
			  IBC_HARNESS_MAX_SIZES);
		return IBC_ERR_INVAL;
	}
	for (k = 0; k < n; k++)
		if (ops[k].variant == NULL || ops[k].run == NULL) {
			ibc_error("harness: operation %zu needs a variant name and a run callback", k);
			return IBC_ERR_INVAL;
		}
	memset(&h, 0, sizeof(h));
	h.boot = boot;
	h.p = p;
	h.probe_start_us = -1;
	h.spin_us = WINDOW_SPIN_US;
	rc = ibc_timer_init();
	if (rc != IBC_OK)
		return rc;
	run_id_make(p, h.run_id, sizeof(h.run_id));
	if (boot->size > 1)
		(void)ibc_boot_bcast(boot, h.run_id, sizeof(h.run_id), 0);
	snprintf(h.launcher, sizeof(h.launcher), "%s",
		 p->launcher != NULL ? p->launcher : boot->ops->name);

	/* naps end when asked, not up to 50 us later (the default slack) */
	(void)prctl(PR_SET_TIMERSLACK, 1UL);
	h.oversub = ibc_topo_oversubscribed(boot->local_size) == 1;
	if (p->wait_force == IBC_WAIT_SPIN || p->wait_force == IBC_WAIT_SPIN_YIELD)
		h.wait = (enum ibc_wait)p->wait_force;
	else
		h.wait = ibc_wait_decide(boot->local_size);
	/* Oversubscribed ranks are pinned too, round robin (local rank r on
	 * PU r mod PUs).  Left to the scheduler, 4 ranks on 2 PUs ran RDS at
	 * either ~2.7 or ~5 us per iteration, one or the other for a whole
	 * run (4 runs of 8 slow; Open MPI's barrier in the same processes
	 * 2.9-3.1 us either way); pinned, 8 of 8 ran at 1.8-3.1 us (a
	 * measurement of an earlier version, not stored). */
	if (p->pin) {
		pin_rc = ibc_topo_pin(boot->local_rank);
		h.pinned = pin_rc == IBC_OK;
	}
	st = calloc(n, sizeof(*st));
	if (st == NULL)
		return run_fail(&h, IBC_ERR_NOMEM, "no memory");
	for (k = 0; k < n; k++)
		st[k].op = &ops[k];

	/* rank 0 opens results.csv; everyone learns whether it worked */
	rc = IBC_OK;
	if (boot->rank == 0) {
		rc = ibc_harness_rows_open(&h);
	}
	if (ibc_boot_agree(boot, rc, &agreed) != IBC_OK || agreed != IBC_OK) {
		rc = agreed != IBC_OK ? agreed : IBC_ERR_CLOSED;
		goto err_free_state;
	}

	rc = ibc_harness_sync_decide(&h);
	if (ibc_boot_agree(boot, rc, &agreed) != IBC_OK || agreed != IBC_OK) {
		rc = agreed != IBC_OK ? agreed : IBC_ERR_CLOSED;
		goto err_close_rows;
	}
	rc = probe_call(&h, &h.probe_start_us);
	if (rc != IBC_OK)
		goto err_close_rows;
	if (boot->rank == 0) {
		struct ibc_harness_meta_in mi = {
			.p = p, .boot = boot, .run_id = h.run_id, .launcher = h.launcher,
			.wait = ibc_wait_name(h.wait), .oversub = h.oversub,
			.pinned = h.pinned, .pin_asked = p->pin,
			.sync = h.sync_name, .sync_why = h.sync_why,
			.clock = h.have_clock ? &h.clock : NULL,
			.probe_us = h.probe_start_us,
		};

		rc = ibc_harness_meta_write(&mi);
		if (rc != IBC_OK)
			ibc_warn("harness: meta.csv not written: %s", ibc_status_str(rc));
	}

	for (i = 0; i < (int)p->nsizes; i++) {
		int again = 0;

		/* across nodes the clocks drift apart: a fresh fit per point */
		if (h.window && i > 0 && boot->num_nodes > 1) {
			rc = ibc_gclock_sync(boot, p->clock_xport, h.wait, &h.clock);
			if (rc != IBC_OK)
				goto err_close_rows;
			if (!h.clock.ok && p->sync_mode == IBC_HARNESS_SYNC_WINDOW) {
				if (boot->rank == 0)
					ibc_error("harness: --sync window needs a good global clock; at "
						  "point %d: %s", i + 1, h.clock.why);
				rc = IBC_ERR_UNSUPPORTED;
				goto err_close_rows;
			}
			if (!h.clock.ok)
				window_off(&h, i, "the global clock failed its check: %s", h.clock.why);
		}
		rc = point_run(&h, i, st, n, &validate_failed, &again);
		if (rc == IBC_OK && again) {
			window_off(&h, i + 1, "every iteration of an operation started late (a noisy host)");
			rc = point_run(&h, i, st, n, &validate_failed, &again);
		}
		if (rc != IBC_OK)
			goto err_close_rows;
		if (h.window && p->sync_mode == IBC_HARNESS_SYNC_AUTO) {
			rc = ibc_boot_bcast(boot, &h.worst_late, sizeof(h.worst_late), 0);
			if (rc != IBC_OK)
				goto err_close_rows;
			/* a host this noisy (a TCG guest, a loaded VM) starts most
			 * iterations late: measure the rest at a barrier */
			if (h.worst_late > WINDOW_FALLBACK)
				window_off(&h, i + 1, "%.0f%% of an operation's iterations started "
					   "late (a noisy host)", 100 * h.worst_late);
		}
	}

	rc = probe_call(&h, &probe_end);
	if (rc == IBC_OK && boot->rank == 0) {
		snprintf(path, sizeof(path), "%s/meta.csv", p->out_dir);
		(void)ibc_harness_meta_append_double(path, "probe_end_us", probe_end);
	}
	rc = validate_failed ? IBC_ERR_VALIDATE : IBC_OK;

err_close_rows:
	ibc_node_sync_close(h.nsync);
	if (h.rows != NULL) {
		rc2 = ibc_csv_writer_close(h.rows);
		if (rc == IBC_OK)
			rc = rc2;
	}
err_free_state:
	free(st);
	return rc;
}
