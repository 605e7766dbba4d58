/* The measurement engine: see harness.h. */
#include "harness/harness.h"
#include "harness/meta.h"
#include "harness/gclock.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GATHER_CHUNK 2048   /* doubles per rank per gather call */
#define MIN_BUDGET_ITERS 10
#define EXTRA_CAP 1024
#define WINDOW_SLEEP_US 200    /* window mode: shortest wait worth a nanosleep */
#define WINDOW_SPIN_US 300     /* window mode: the end of a wait that is spun (at least) */
#define WINDOW_SPIN_MAX_US 20000.0 /* ... and at most, however late naps end */
#define WINDOW_FALLBACK 0.5    /* auto: more late iterations than this -> barrier from then on */
#define WINDOW_SLICE_US 1000   /* window mode: longest nap between progress calls */
#define WINDOW_BLOCK_US 2000.0 /* window mode: aim of a block's length */
#define WINDOW_BLOCK_MIN 16    /* ... in rounds, at least */
#define WINDOW_BLOCK_MAX 512   /* ... and at most */
#define WINDOW_MAX_US 1e6      /* W never grows beyond a second */
#define WINDOW_MARGIN_US 500.0 /* first anchor: the bcast must reach everyone before it */
#define PROGRESS_EVERY 64      /* polls between progress calls in a spin */
#define IBC_HARNESS_SYNC_TIMEOUT_S 600.0 /* node sync: a rank this late is gone */

struct op_state;

struct ibc_harness {
	struct ibc_boot *boot;
	const struct ibc_harness_params *p;
	enum ibc_wait wait;
	int oversub;
	int pinned;
	double sample_override; /* < 0: none */
	double sample_end_us;   /* > 0: the operation's end (ibc_harness_sample_end) */
	double probe_start_us;
	/* how iterations start */
	int window;              /* 1: window mode */
	int have_clock;          /* clock below was built */
	struct ibc_gclock clock;
	char sync_name[64];
	char sync_why[256];
	struct ibc_node_sync *nsync; /* the sync step on one node, else NULL */
	/* window mode, per point (W and the late tolerance are per operation) */
	double win_next_g;       /* global start of the next iteration */
	double margin_us;        /* an anchor is this far ahead of rank 0's now */
	int win_late;            /* the last window wait ended late */
	long block_rounds;       /* rounds per block */
	int block_first_late;    /* this rank started a block's first window late */
	double spin_us;          /* the end of a wait spun: learnt from how late naps end */
	double worst_late;       /* rank 0: the largest late fraction of an operation's
				    iterations in the last point */
	/* operations of the current point (window mode) */
	struct op_state *st;
	size_t nst;
	char run_id[96];
	char launcher[64];
	struct ibc_csv_writer *rows; /* rank 0 */
};

/* ----------------------------------------------------------- columns ---- */
static const char *const row_columns[] = {
	"run_id", "suite", "variant", "impl", "xport", "launcher", "nodes", "ppn", "ranks",
	"bytes", "fanin", "iters", "warmup", "min_us", "p50_us", "mean_us", "p99_us", "max_us",
	"stdev_us", "ci_lo_us", "ci_hi_us", "skew_us", "wait", "oversub", "probe_us", "extra"
};
#define NCOLS (sizeof(row_columns) / sizeof(row_columns[0]))

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

int ibc_harness_sync_parse(const char *name, enum ibc_harness_sync_mode *out)
{
	if (name == NULL || strcmp(name, "auto") == 0)
		*out = IBC_HARNESS_SYNC_AUTO;
	else if (strcmp(name, "window") == 0)
		*out = IBC_HARNESS_SYNC_WINDOW;
	else if (strcmp(name, "barrier") == 0)
		*out = IBC_HARNESS_SYNC_BARRIER;
	else
		return IBC_ERR_INVAL;
	return IBC_OK;
}

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
const struct ibc_gclock *ibc_harness_gclock(const struct ibc_harness *h) { return &h->clock; }

/* ------------------------------------------------------------ helpers ---- */
static void fmt_double(char *buf, size_t cap, double v)
{
	if (isnan(v) || v < 0)
		buf[0] = '\0';
	else
		snprintf(buf, cap, "%.4f", v);
}

/* ------------------------------------------------------------ points ---- */
struct op_state {
	const struct ibc_harness_op *op;
	int active;       /* set up on every rank for this point */
	int valid;        /* -1 not checked, 0 failed, 1 ok */
	long late;        /* window mode: timed starts this rank reached late */
	long late_iters;  /* rank 0: iterations dropped because a rank started late */
	long kept;        /* rank 0: iterations in the statistics */
	double *samples;  /* iters, this rank */
	double *all;      /* rank 0: size * iters */
	double *warm;     /* warm-up durations of this rank (window mode's first W) */
	long nwarm;
	/* window mode */
	double win_us;    /* this operation's window W */
	double late_tol_us;
	long block_late;  /* this rank's late starts of it in the block */
	double *dur;      /* this rank's times of it in the block (us) */
	long ndur;
	struct ibc_stats st;
	double skew_p50, rank_mean;
	char extra[EXTRA_CAP];
};

/* The driver's serve hook (params.serve), while the harness waits. */
static int serve(void *arg)
{
	struct ibc_harness *h = arg;
	int rc;

	if (h->p->serve == NULL)
		return IBC_OK;
	rc = h->p->serve(h->p->serve_arg);
	if (rc != IBC_OK)
		ibc_error("harness: serving the operations while waiting failed: %s",
			  ibc_status_str(rc));
	return rc;
}

int ibc_harness_sync(struct ibc_harness *h)
{
	if (h->nsync != NULL)
		return ibc_node_sync(h->nsync, serve, h);
	return ibc_boot_barrier(h->boot);
}

static double op_scale(const struct ibc_harness_op *op)
{
	return op->scale > 0 ? op->scale : 1.0;
}

/* gathers n doubles of every rank to rank 0's all (size * n) */
static int samples_gather(struct ibc_boot *b, const double *mine, double *all, size_t n)
{
	double *tmp = NULL;
	size_t off, chunk, r;
	int rc = IBC_OK;

	if (b->size == 1) {
		memcpy(all, mine, n * sizeof(double));
		return IBC_OK;
	}
	if (b->rank == 0) {
		tmp = malloc(sizeof(double) * GATHER_CHUNK * (size_t)b->size);
		if (tmp == NULL)
			return IBC_ERR_NOMEM; /* the others would hang: the caller aborts */
	}
	for (off = 0; off < n; off += chunk) {
		chunk = n - off < GATHER_CHUNK ? n - off : GATHER_CHUNK;
		rc = ibc_boot_gather(b, mine + off, tmp, chunk * sizeof(double), 0);
		if (rc != IBC_OK)
			break;
		if (b->rank == 0)
			for (r = 0; r < (size_t)b->size; r++)
				memcpy(all + r * n + off, tmp + r * chunk, chunk * sizeof(double));
	}
	free(tmp);
	return rc;
}

/* ------------------------------------------------------------ window ---- */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void block_rounds_set(struct ibc_harness *h)
{
	double per = 0;
	long r;
	size_t k;

	for (k = 0; k < h->nst; k++)
		if (h->st[k].active)
			per += h->st[k].win_us;
	r = per > 0 ? (long)(WINDOW_BLOCK_US / per) : WINDOW_BLOCK_MAX;
	h->block_rounds = r < WINDOW_BLOCK_MIN ? WINDOW_BLOCK_MIN : r > WINDOW_BLOCK_MAX ? WINDOW_BLOCK_MAX : r;
}

/* W for an operation whose slowest rank's median time is d: three times
 * that, plus the clock's error twice and 2 us (the harness's own time
 * between operations) */
static double window_of(const struct ibc_harness *h, double d)
{
	return 3 * d + 2 * h->clock.err_us + 2.0;
}

/* The first W of each operation, from the warm-up's medians (window_of);
 * its late tolerance a quarter of the median, within [0.2, 2] us. */
static int window_first(struct ibc_harness *h, struct op_state *st, size_t n)
{
	const struct ibc_harness_params *p = h->p;
	double *d = calloc(n, sizeof(double)), *all = NULL, *w = calloc(2 * n + 1, sizeof(double));
	size_t k;
	int rc = IBC_OK, r;

	if (d == NULL || w == NULL ||
	    (h->boot->rank == 0 && (all = calloc((size_t)h->boot->size * n, sizeof(double))) == NULL))
		rc = IBC_ERR_NOMEM;
	for (k = 0; rc == IBC_OK && k < n; k++) {
		if (!st[k].active || st[k].nwarm == 0)
			continue;
		qsort(st[k].warm, (size_t)st[k].nwarm, sizeof(double), cmp_double);
		d[k] = st[k].warm[st[k].nwarm / 2];
	}
	if (rc == IBC_OK)
		rc = ibc_boot_gather(h->boot, d, all, n * sizeof(double), 0);
	if (rc == IBC_OK && h->boot->rank == 0) {
		for (k = 0; k < n; k++) {
			for (r = 0; r < h->boot->size; r++)
				d[k] = fmax(d[k], all[(size_t)r * n + k]);
			w[2 * k] = p->window_us > 0 ? p->window_us : window_of(h, d[k]);
			w[2 * k + 1] = p->late_tol_us > 0 ? p->late_tol_us : fmin(2.0, fmax(0.2, d[k] / 4));
		}
		w[2 * n] = WINDOW_MARGIN_US;
	}
	if (rc == IBC_OK)
		rc = ibc_boot_bcast(h->boot, w, (2 * n + 1) * sizeof(double), 0);
	for (k = 0; rc == IBC_OK && k < n; k++) {
		st[k].win_us = w[2 * k];
		st[k].late_tol_us = w[2 * k + 1];
		free(st[k].dur);
		st[k].ndur = 0;
		st[k].dur = malloc(sizeof(double) * WINDOW_BLOCK_MAX);
		if (st[k].dur == NULL)
			rc = IBC_ERR_NOMEM;
	}
	if (rc == IBC_OK) {
		h->margin_us = w[2 * n];
		block_rounds_set(h);
	}
	free(d);
	free(w);
	free(all);
	return rc;
}

/* A new anchor for the next block: the ranks line up at the sync step
 * (serving progress), rank 0 learns how the last block went, adapts each W
 * and the anchor's margin, and sends the next block's global start.  W
 * follows its operation's time (window_of the slowest rank's median over
 * the block's starts that were on time; it grows at once and shrinks by at
 * most a fifth per block) and grows by half more only when a quarter of its
 * starts were late (a window too short for what runs between operations).
 * Neither the odd late start (the VM's noise) nor the times it inflates
 * move W: that feedback would make W, the naps and the oversleeps run away. */
static int window_anchor(struct ibc_harness *h, int first)
{
	const struct ibc_harness_params *p = h->p;
	size_t n = h->nst, k, m = 2 * n + 1;
	double *mine = calloc(m, sizeof(double)), *all = NULL, *out = calloc(n + 2, sizeof(double));
	int rc = IBC_OK, r;

	if (mine == NULL || out == NULL ||
	    (h->boot->rank == 0 && (all = calloc((size_t)h->boot->size * m, sizeof(double))) == NULL))
		rc = IBC_ERR_NOMEM;
	for (k = 0; rc == IBC_OK && k < n; k++) {
		struct op_state *s = &h->st[k];

		mine[2 * k] = (double)s->block_late;
		if (s->active && s->ndur > 0) {
			qsort(s->dur, (size_t)s->ndur, sizeof(double), cmp_double);
			mine[2 * k + 1] = s->dur[s->ndur / 2];
		}
	}
	if (rc == IBC_OK) {
		mine[2 * n] = h->block_first_late;
		rc = ibc_harness_sync(h);
	}
	if (rc == IBC_OK)
		rc = ibc_boot_gather(h->boot, mine, all, m * sizeof(double), 0);
	if (rc == IBC_OK && h->boot->rank == 0) {
		double first_late = 0;

		for (r = 0; r < h->boot->size; r++)
			first_late += all[(size_t)r * m + 2 * n];
		if (!first)
			h->margin_us = first_late > 0 ? fmin(h->margin_us * 2, 100000.0)
						      : fmax(h->margin_us * 0.9, 50.0);
		for (k = 0; k < n; k++) {
			struct op_state *s = &h->st[k];
			double late = 0, d50 = 0, w;

			for (r = 0; r < h->boot->size; r++) {
				late += all[(size_t)r * m + 2 * k];
				d50 = fmax(d50, all[(size_t)r * m + 2 * k + 1]);
			}
			w = s->win_us;
			if (s->active && !first && p->window_us <= 0 && d50 > 0) {
				w = window_of(h, d50);
				/* late starts grow W only so far: beyond that they are
				 * the host's noise, which a longer window does not cure */
				if (late > 0.25 * (double)h->block_rounds * h->boot->size)
					w = fmin(fmax(w, 1.5 * s->win_us), 4 * window_of(h, d50));
				w = fmin(fmax(w, 0.8 * s->win_us), WINDOW_MAX_US);
			}
			out[k] = w;
			if (s->active)
				ibc_debug("harness: window anchor: %s: late %g of %ld starts, median %.3f us -> W %.3f us",
					  s->op->variant, late, h->block_rounds * h->boot->size, d50, w);
		}
		out[n] = h->margin_us;
		out[n + 1] = ibc_gclock_now(&h->clock) + h->margin_us;
	}
	if (rc == IBC_OK)
		rc = ibc_boot_bcast(h->boot, out, (n + 2) * sizeof(double), 0);
	if (rc == IBC_OK) {
		for (k = 0; k < n; k++) {
			h->st[k].win_us = out[k];
			h->st[k].block_late = 0;
			h->st[k].ndur = 0;
		}
		h->margin_us = out[n];
		h->win_next_g = out[n + 1];
		h->block_first_late = 0;
		block_rounds_set(h);
	}
	free(mine);
	free(all);
	free(out);
	return rc;
}

/* Waits for the start of s's next window (sleeping through most of a long
 * wait, serving progress, spinning the end); returns the start in local us.
 * The start is late when, after the wait, the clock is past it by more than
 * s's tolerance: judged after the sleep and the spin, so an oversleep counts. */
static int window_wait(struct ibc_harness *h, struct op_state *s, int first_of_block,
		       double *start_out)
{
	double start = ibc_gclock_local(&h->clock, h->win_next_g), now = ibc_timer_now_us();
	unsigned long polls = 0;
	int rc;

	h->win_next_g += s->win_us;
	while (start - now > WINDOW_SLEEP_US + h->spin_us) {
		/* a spinning waiter loses its PU's share to other processes and
		 * then wakes late: nap, in slices that leave room for progress;
		 * a nap that ends late (a VM's coarse timer) makes the spun end
		 * of later waits longer */
		double nap = fmin(start - now - h->spin_us, WINDOW_SLICE_US), over;
		struct timespec ts = { (time_t)(nap / 1e6), (long)(fmod(nap, 1e6) * 1000) };

		nanosleep(&ts, NULL);
		over = ibc_timer_now_us() - now - nap;
		if (2 * over > h->spin_us)
			h->spin_us = fmin(2 * over, WINDOW_SPIN_MAX_US);
		rc = serve(h);
		if (rc != IBC_OK)
			return rc;
		if (ibc_wait_aborted())
			return IBC_ERR_INTERRUPTED;
		now = ibc_timer_now_us();
	}
	while ((now = ibc_timer_now_us()) < start) {
		ibc_wait_relax(h->wait, &polls);
		if (polls % PROGRESS_EVERY == 0) {
			rc = serve(h);
			if (rc != IBC_OK)
				return rc;
			if (ibc_wait_aborted())
				return IBC_ERR_INTERRUPTED;
		}
	}
	h->win_late = now - start > s->late_tol_us;
	if (h->win_late) {
		s->block_late++;
		h->block_first_late |= first_of_block;
	}
	*start_out = start;
	return IBC_OK;
}

/* one iteration of op k: prepare, sync (or window), timed run */
static int iteration(struct ibc_harness *h, struct op_state *s, double *sample, int first_of_block)
{
	const struct ibc_harness_op *op = s->op;
	double t0, t1;
	int rc;

	if (op->prepare != NULL) {
		rc = op->prepare(h, op->arg);
		if (rc != IBC_OK) {
			ibc_error("harness: %s: prepare failed: %s", op->variant, ibc_status_str(rc));
			return rc;
		}
	}
	h->win_late = 0;
	if (h->window && sample != NULL) {
		rc = window_wait(h, s, first_of_block, &t0);
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
	rc = op->run(h, op->arg);
	t1 = h->sample_end_us > 0 ? h->sample_end_us : ibc_timer_now_us();
	if (rc != IBC_OK) {
		ibc_error("harness: %s: iteration failed: %s", op->variant, ibc_status_str(rc));
		return rc;
	}
	if (h->window && sample != NULL && !h->win_late && s->dur != NULL && s->ndur < WINDOW_BLOCK_MAX)
		s->dur[s->ndur++] = t1 - t0;
	if (sample == NULL) {
		if (s->warm != NULL)
			s->warm[s->nwarm++] = t1 - t0;
		return IBC_OK;
	}
	*sample = (h->sample_override >= 0 ? h->sample_override : t1 - t0) * op_scale(op);
	if (h->win_late) {
		/* marked by the sign: reduce() drops the iteration for every rank */
		s->late++;
		*sample = -*sample - 1;
	}
	return IBC_OK;
}

/* rank 0: per-iteration reduction over ranks, then the statistics */
static int reduce(struct ibc_harness *h, struct op_state *s, long iters)
{
	int size = h->boot->size, r;
	double *per_iter, *skew, *rank_sum, lo, hi, v, sum_means = 0;
	struct ibc_stats sk;
	long i, kept;
	int rc;

	per_iter = malloc(sizeof(double) * (size_t)iters);
	skew = malloc(sizeof(double) * (size_t)iters);
	rank_sum = calloc((size_t)size, sizeof(double));
	if (per_iter == NULL || skew == NULL || rank_sum == NULL) {
		free(per_iter);
		free(skew);
		free(rank_sum);
		return IBC_ERR_NOMEM;
	}
	for (i = 0, kept = 0; i < iters; i++) {
		int late = 0;

		lo = hi = s->all[i];
		for (r = 0; r < size; r++) {
			v = s->all[(size_t)r * (size_t)iters + (size_t)i];
			late |= v < 0;
			if (v < lo)
				lo = v;
			if (v > hi)
				hi = v;
		}
		if (late) /* window mode only: counted in extra late_iters */
			continue;
		per_iter[kept] = s->op->timing == IBC_HARNESS_TIME_ROOT ? s->all[i] : hi;
		skew[kept] = hi - lo;
		for (r = 0; r < size; r++)
			rank_sum[r] += s->all[(size_t)r * (size_t)iters + (size_t)i];
		kept++;
	}
	s->late_iters = iters - kept;
	s->kept = kept;
	if ((double)s->late_iters / (double)iters > h->worst_late)
		h->worst_late = (double)s->late_iters / (double)iters;
	if (kept == 0) {
		/* the caller decides: measure the point again at a barrier (auto)
		 * or fail (--sync window) */
		free(per_iter);
		free(skew);
		free(rank_sum);
		return IBC_OK;
	}
	for (r = 0; r < size; r++)
		sum_means += rank_sum[r] / (double)kept;
	s->rank_mean = sum_means / size;
	rc = ibc_stats_compute_inplace(per_iter, (size_t)kept, &s->st);
	if (rc == IBC_OK)
		rc = ibc_stats_compute_inplace(skew, (size_t)kept, &sk);
	if (rc == IBC_OK)
		s->skew_p50 = sk.p50;
	free(per_iter);
	free(skew);
	free(rank_sum);
	return rc;
}

static void extra_append(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void extra_append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= cap)
		return;
	if (used > 0)
		buf[used++] = ';', buf[used] = '\0';
	va_start(ap, fmt);
	vsnprintf(buf + used, cap - used, fmt, ap);
	va_end(ap);
}

static int row_write(struct ibc_harness *h, struct op_state *s, struct op_state *all_ops, size_t n,
		     const struct ibc_harness_point *pt)
{
	const struct ibc_harness_params *p = h->p;
	const struct ibc_harness_op *op = s->op;
	char c_nodes[32], c_ppn[32], c_ranks[32], c_bytes[32], c_fanin[32], c_iters[32],
		c_warm[32], c_min[32], c_p50[32], c_mean[32], c_p99[32], c_max[32], c_sd[32],
		c_cilo[32], c_cihi[32], c_skew[32], c_over[8], c_probe[32], extra[EXTRA_CAP + 512];
	const char *fields[NCOLS];
	size_t k, j;
	char name[64];

	snprintf(c_nodes, sizeof(c_nodes), "%d", h->boot->num_nodes);
	snprintf(c_ppn, sizeof(c_ppn), "%d", h->boot->local_size);
	snprintf(c_ranks, sizeof(c_ranks), "%d", h->boot->size);
	snprintf(c_bytes, sizeof(c_bytes), "%zu", pt->bytes);
	if (op->fanin > 0)
		snprintf(c_fanin, sizeof(c_fanin), "%ld", op->fanin);
	else
		c_fanin[0] = '\0';
	snprintf(c_iters, sizeof(c_iters), "%ld", s->kept);
	snprintf(c_warm, sizeof(c_warm), "%ld", pt->warmup);
	fmt_double(c_min, sizeof(c_min), s->st.min);
	fmt_double(c_p50, sizeof(c_p50), s->st.p50);
	fmt_double(c_mean, sizeof(c_mean), s->st.mean);
	fmt_double(c_p99, sizeof(c_p99), s->st.p99);
	fmt_double(c_max, sizeof(c_max), s->st.max);
	fmt_double(c_sd, sizeof(c_sd), s->st.stdev);
	fmt_double(c_cilo, sizeof(c_cilo), s->st.ci_lo);
	fmt_double(c_cihi, sizeof(c_cihi), s->st.ci_hi);
	fmt_double(c_skew, sizeof(c_skew), s->skew_p50);
	if (op->one_figure) {
		/* one figure repeated: no spread was measured */
		snprintf(c_iters, sizeof(c_iters), "1");
		c_min[0] = c_p99[0] = c_max[0] = c_sd[0] = c_cilo[0] = c_cihi[0] = c_skew[0] = '\0';
	}
	snprintf(c_over, sizeof(c_over), "%d", h->oversub);
	fmt_double(c_probe, sizeof(c_probe), h->probe_start_us);

	extra[0] = '\0';
	extra_append(extra, sizeof(extra), "rank_mean_us=%.4f", s->rank_mean);
	if (op->one_figure)
		extra_append(extra, sizeof(extra), "n=1");
	for (j = 0; j < p->nfactor_refs; j++) {
		const char *ref = p->factor_refs[j], *slash = strchr(ref, '/');
		size_t vlen = slash != NULL ? (size_t)(slash - ref) : strlen(ref);

		for (k = 0; k < n; k++) {
			const struct ibc_harness_op *o2 = all_ops[k].op;

			if (!all_ops[k].active || strlen(o2->variant) != vlen ||
			    strncmp(o2->variant, ref, vlen) != 0)
				continue;
			if (slash != NULL && strcmp(o2->impl != NULL ? o2->impl : "ibchar", slash + 1) != 0)
				continue;
			if (o2->fanin > 0 && o2->fanin != op->fanin)
				continue;
			snprintf(name, sizeof(name), "factor_vs_%s", ref);
			for (char *c = name; *c; c++)
				if (*c == '-' || *c == '/')
					*c = '_';
			if (s->st.p50 > 0)
				extra_append(extra, sizeof(extra), "%s=%.4f", name,
					     all_ops[k].st.p50 / s->st.p50);
			break;
		}
	}
	extra_append(extra, sizeof(extra), "sync=%s", h->window ? "window" : "barrier");
	if (h->window)
		extra_append(extra, sizeof(extra), "window_us=%.3f;late_tol_us=%.3f;late=%ld;late_iters=%ld",
			     s->win_us, s->late_tol_us, s->late, s->late_iters);
	if (s->valid >= 0)
		extra_append(extra, sizeof(extra), "valid=%d", s->valid);
	if (s->extra[0] != '\0')
		extra_append(extra, sizeof(extra), "%s", s->extra);

	fields[0] = h->run_id;
	fields[1] = p->suite;
	fields[2] = op->variant;
	fields[3] = op->impl != NULL ? op->impl : "ibchar";
	fields[4] = op->xport != NULL ? op->xport : p->xport;
	fields[5] = h->launcher;
	fields[6] = c_nodes;
	fields[7] = c_ppn;
	fields[8] = c_ranks;
	fields[9] = c_bytes;
	fields[10] = c_fanin;
	fields[11] = c_iters;
	fields[12] = c_warm;
	fields[13] = c_min;
	fields[14] = c_p50;
	fields[15] = c_mean;
	fields[16] = c_p99;
	fields[17] = c_max;
	fields[18] = c_sd;
	fields[19] = c_cilo;
	fields[20] = c_cihi;
	fields[21] = c_skew;
	fields[22] = ibc_wait_name(h->wait);
	fields[23] = c_over;
	fields[24] = c_probe;
	fields[25] = extra;
	if (p->print_rows) {
		printf("%-10s %-16s ranks=%-4d bytes=%-8zu%s%-4s p50=%10.3f us  mean=%10.3f  p99=%10.3f  skew=%8.3f\n",
		       p->suite, op->variant, h->boot->size, pt->bytes, op->fanin > 0 ? " fanin=" : "",
		       c_fanin, s->st.p50, s->st.mean, s->st.p99, s->skew_p50);
		fflush(stdout);
	}
	return ibc_csv_writer_row(h->rows, fields);
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
		st[k].samples = st[k].all = st[k].warm = st[k].dur = NULL;
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

static int point_run(struct ibc_harness *h, int index, struct op_state *st, size_t n, int *validate_failed)
{
	const struct ibc_harness_params *p = h->p;
	struct ibc_boot *b = h->boot;
	struct ibc_harness_point pt = { 0 };
	long iters, warmup, i, want, round;
	size_t j, k, nactive = 0;
	int rc, agreed;
	double t_start, per_iter, elapsed;
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
	h->st = st;
	h->nst = n;

	for (k = 0; k < n; k++) {
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
		st[k].warm = h->window ? calloc((size_t)warmup + 1, sizeof(double)) : NULL;
		st[k].nwarm = 0;
		if (h->window && st[k].warm == NULL) {
			rc = IBC_ERR_NOMEM;
			goto err_abort;
		}
		nactive++;
	}
	if (nactive == 0)
		return IBC_OK;
	h->worst_late = 0;

	/* warm-up (sync step before each iteration), timed as a whole to fit
	 * the budget; its first iteration alone caps the warm-up itself at a
	 * fifth of the budget */
	t_start = ibc_timer_now_us();
	if (warmup > 0 && p->budget_s > 0) {
		for (k = 0; k < n; k++)
			if (st[k].active && (rc = iteration(h, &st[k], NULL, 0)) != IBC_OK)
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
			if (st[k].active && (rc = iteration(h, &st[k], NULL, 0)) != IBC_OK)
				goto err_abort;
	elapsed = ibc_timer_now_us() - t_start;
	want = iters;
	if (b->rank == 0 && p->budget_s > 0 && warmup > 0) {
		per_iter = elapsed / (double)warmup;
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
	pt.iters = iters;

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
	if (h->window && (rc = window_first(h, st, n)) != IBC_OK)
		goto err_abort;
	if ((rc = ops_timed_mark(h, st, n, 0)) != IBC_OK)
		goto err_abort;
	t_start = ibc_timer_now_us();
	for (i = 0, round = 0; i < iters; i++, round++) {
		int first = 0;

		/* window mode: a fresh anchor per block, so one late start does
		 * not make the following ones late too */
		if (h->window && (i == 0 || round == h->block_rounds)) {
			rc = window_anchor(h, i == 0);
			if (rc != IBC_OK)
				goto err_abort;
			round = 0;
			first = 1;
		}
		/* interleaved, and rotated so no variant always runs first or
		 * right after the same neighbour (position effects cancel) */
		for (j = 0; j < n; j++) {
			k = (j + (size_t)i) % n;
			if (!st[k].active)
				continue;
			rc = iteration(h, &st[k], &st[k].samples[i], first);
			if (rc != IBC_OK)
				goto err_abort;
			first = 0;
		}
	}
	elapsed = ibc_timer_now_us() - t_start;
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
		rc = samples_gather(b, st[k].samples, st[k].all, (size_t)iters);
		if (rc != IBC_OK)
			goto err_abort;
		if (b->rank == 0 && (rc = reduce(h, &st[k], iters)) != IBC_OK)
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
			return p->sync_mode == IBC_HARNESS_SYNC_AUTO ? IBC_ERR_AGAIN : IBC_ERR_TIMEOUT;
		}
	}
	if (b->rank == 0) {
		for (k = 0; k < n; k++) {
			if (!st[k].active)
				continue;
			rc = row_write(h, &st[k], st, n, &pt);
			if (rc != IBC_OK)
				goto err_abort;
		}
		if (p->progress) {
			/* one write, so lines of several processes do not mix */
			char line[2048];
			size_t used;

			snprintf(line, sizeof(line), "%s: point %d/%zu: %d ranks, %zu bytes, %ld iters, %.2f s:",
				 p->suite, index + 1, p->nsizes, b->size, pt.bytes, iters, elapsed / 1e6);
			for (k = 0; k < n; k++) {
				used = strlen(line);
				if (!st[k].active || used + 2 >= sizeof(line))
					continue;
				if (st[k].op->fanin > 0)
					snprintf(line + used, sizeof(line) - used, " %s/l=%ld %.3f us",
						 st[k].op->variant, st[k].op->fanin, st[k].st.p50);
				else
					snprintf(line + used, sizeof(line) - used, " %s %.3f us",
						 st[k].op->variant, st[k].st.p50);
			}
			fprintf(stderr, "%s\n", line);
		}
	}
	ops_release(h, st, n, 1);
	return IBC_OK;

err_abort:
	/* abort first: a peer may be blocked in an operation or a collective
	 * that this rank will never enter; then free, without collective
	 * teardown */
	rc = run_fail(h, rc, what);
	ops_release(h, st, n, 0);
	return rc;
}

/* --------------------------------------------------------------- run ---- */
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

/* The sync step (node sync on one node) and the mode: window needs a good
 * global clock and ranks that fit the PUs (auto), or is insisted on. */
static int sync_decide(struct ibc_harness *h)
{
	const struct ibc_harness_params *p = h->p;
	struct ibc_boot *b = h->boot;
	int rc;

	if (b->size > 1 && b->num_nodes == 1) {
		rc = ibc_node_sync_open(b, h->wait, IBC_HARNESS_SYNC_TIMEOUT_S, &h->nsync);
		if (rc != IBC_OK)
			return rc;
	}
	snprintf(h->sync_name, sizeof(h->sync_name), "%s",
		 b->size == 1 ? "none (one rank)" : h->nsync != NULL ? "node-shm-barrier" : "boot-barrier");
	if (b->size == 1 || p->sync_mode == IBC_HARNESS_SYNC_BARRIER) {
		snprintf(h->sync_why, sizeof(h->sync_why), "%s",
			 b->size == 1 ? "one rank" : "asked for (--sync barrier)");
		return IBC_OK;
	}
	if (p->sync_mode == IBC_HARNESS_SYNC_AUTO && h->oversub) {
		snprintf(h->sync_why, sizeof(h->sync_why),
			 "oversubscribed: %d ranks on this node cannot all be on a PU at one instant",
			 b->local_size);
		return IBC_OK;
	}
	rc = ibc_gclock_sync(b, p->clock_xport, h->wait, &h->clock);
	if (rc != IBC_OK) {
		if (b->rank == 0)
			ibc_error("harness: building the global clock failed: %s", ibc_status_str(rc));
		return rc;
	}
	h->have_clock = 1;
	if (!h->clock.ok) {
		if (p->sync_mode == IBC_HARNESS_SYNC_WINDOW) {
			if (b->rank == 0)
				ibc_error("harness: --sync window needs a good global clock: %s",
					  h->clock.why);
			return IBC_ERR_UNSUPPORTED;
		}
		if (b->rank == 0)
			ibc_warn("harness: %s; iterations start at a barrier instead", h->clock.why);
		snprintf(h->sync_why, sizeof(h->sync_why), "%s", h->clock.why);
		return IBC_OK;
	}
	h->window = 1;
	snprintf(h->sync_name, sizeof(h->sync_name), "window");
	snprintf(h->sync_why, sizeof(h->sync_why), "%s; clock error <= %.3f us",
		 p->sync_mode == IBC_HARNESS_SYNC_WINDOW ? "asked for (--sync window)"
							  : "the global clock is good",
		 h->clock.err_us);
	return IBC_OK;
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
	if (p->pin && !h.oversub) {
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
		rc = ibc_fs_mkdir_p(p->out_dir);
		if (rc == IBC_OK) {
			snprintf(path, sizeof(path), "%s/results.csv", p->out_dir);
			rc = ibc_csv_writer_open(path, row_columns, NCOLS, p->append, &h.rows);
		}
	}
	if (ibc_boot_agree(boot, rc, &agreed) != IBC_OK || agreed != IBC_OK) {
		rc = agreed != IBC_OK ? agreed : IBC_ERR_CLOSED;
		goto err_free_state;
	}

	rc = sync_decide(&h);
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
		/* across nodes the clocks drift apart: a fresh fit per point */
		if (h.window && i > 0 && boot->num_nodes > 1) {
			rc = ibc_gclock_sync(boot, p->clock_xport, h.wait, &h.clock);
			if (rc == IBC_OK && !h.clock.ok) {
				if (boot->rank == 0)
					ibc_error("harness: the global clock failed its check at point %d: %s",
						  i + 1, h.clock.why);
				rc = IBC_ERR_VALIDATE;
			}
			if (rc != IBC_OK)
				goto err_close_rows;
		}
		rc = point_run(&h, i, st, n, &validate_failed);
		if (rc == IBC_ERR_AGAIN) {
			h.window = 0;
			snprintf(h.sync_why, sizeof(h.sync_why),
				 "window mode until point %d, then barrier: every iteration of an "
				 "operation started late (a noisy host)", i + 1);
			if (boot->rank == 0) {
				snprintf(path, sizeof(path), "%s/meta.csv", p->out_dir);
				(void)ibc_harness_meta_append(path, "sync_fallback", h.sync_why);
			}
			rc = point_run(&h, i, st, n, &validate_failed);
		}
		if (rc != IBC_OK)
			goto err_close_rows;
		if (h.window && p->sync_mode == IBC_HARNESS_SYNC_AUTO &&
		    ibc_boot_bcast(boot, &h.worst_late, sizeof(h.worst_late), 0) == IBC_OK &&
		    h.worst_late > WINDOW_FALLBACK) {
			/* a host this noisy (a TCG guest, a loaded VM) starts most
			 * iterations late: measure the rest at a barrier */
			h.window = 0;
			snprintf(h.sync_why, sizeof(h.sync_why),
				 "window mode until point %d, then barrier: %.0f%% of an operation's "
				 "iterations started late (a noisy host)", i + 1, 100 * h.worst_late);
			if (boot->rank == 0) {
				ibc_warn("harness: %s", h.sync_why);
				snprintf(path, sizeof(path), "%s/meta.csv", p->out_dir);
				(void)ibc_harness_meta_append(path, "sync_fallback", h.sync_why);
			}
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
