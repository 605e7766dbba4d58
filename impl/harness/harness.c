/* The measurement engine: see harness.h. */
#include "harness/harness.h"
#include "harness/meta.h"
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GATHER_CHUNK 2048   /* doubles per rank per gather call */
#define MIN_BUDGET_ITERS 10
#define EXTRA_CAP 1024
#define WINDOW_RESYNC 16    /* window mode: timed iterations between common starts */
#define WINDOW_SLEEP_US 100 /* window mode: shortest wait worth a nanosleep */
#define WINDOW_SPIN_US 150  /* window mode: the end of a wait that is spun */
#define IBC_HARNESS_SYNC_TIMEOUT_S 600.0 /* node sync: a rank this late is gone */

struct ibc_harness {
	struct ibc_boot *boot;
	const struct ibc_harness_params *p;
	enum ibc_wait wait;
	int oversub;
	int pinned;
	double sample_override; /* < 0: none */
	double probe_start_us;
	uint64_t win_next;       /* window mode: start of the next iteration (ticks) */
	uint64_t win_ticks;      /* window length in ticks */
	int win_late;            /* the last window_wait started late */
	char run_id[96];
	char launcher[64];
	struct ibc_csv_writer *rows; /* rank 0 */
	struct ibc_node_sync *nsync; /* the default sync on one node, else NULL */
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

/* ------------------------------------------------------------ helpers ---- */
static void fmt_double(char *buf, size_t cap, double v)
{
	if (isnan(v) || v < 0)
		buf[0] = '\0';
	else
		snprintf(buf, cap, "%.4f", v);
}

static int sync_default(struct ibc_harness *h, void *arg)
{
	(void)arg;
	return h->nsync != NULL ? ibc_node_sync(h->nsync) : ibc_boot_barrier(h->boot);
}

/* The default sync: the node sync when every rank is on this node and the
 * bootstrap's barrier is a network round trip (a shared-memory one such as
 * fork's already lines them up, and fork's notices dead ranks). */
static int sync_open(struct ibc_harness *h)
{
	struct ibc_boot *b = h->boot;

	if (h->p->sync.fn != NULL || h->p->window_us > 0 || b->size < 2 || b->num_nodes != 1 ||
	    b->ops->barrier_is_shm)
		return IBC_OK;
	return ibc_node_sync_open(b, h->wait, IBC_HARNESS_SYNC_TIMEOUT_S, &h->nsync);
}

static int sync_step(struct ibc_harness *h)
{
	const struct ibc_harness_sync *s = &h->p->sync;

	return s->fn != NULL ? s->fn(h, s->arg) : sync_default(h, NULL);
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
			return IBC_ERR_NOMEM; /* the others would hang: abort below */
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

/* ------------------------------------------------------------ points ---- */
struct op_state {
	const struct ibc_harness_op *op;
	int active;       /* set up on every rank for this point */
	int valid;        /* -1 not checked, 0 failed, 1 ok */
	long late;        /* window mode: timed starts this rank reached late */
	long late_iters;  /* rank 0: iterations dropped because a rank started late */
	double *samples;  /* iters, this rank */
	double *all;      /* rank 0: size * iters */
	struct ibc_stats st;
	double skew_p50, rank_mean;
	char extra[EXTRA_CAP];
};

static double op_scale(const struct ibc_harness_op *op)
{
	return op->scale > 0 ? op->scale : 1.0;
}

/* window mode: every rank agrees on the first start, a margin ahead */
static int window_begin(struct ibc_harness *h)
{
	uint64_t start = 0;
	int rc = ibc_boot_barrier(h->boot);

	if (rc != IBC_OK)
		return rc;
	if (h->boot->rank == 0)
		start = ibc_timer_ticks() + 2 * h->win_ticks +
			(uint64_t)(5000.0 / ibc_timer_ticks_to_us(1000000) * 1e6);
	rc = ibc_boot_bcast(h->boot, &start, sizeof(start), 0);
	h->win_next = start;
	return rc;
}

/* window mode: waits for the next start; returns it, counting a late arrival */
static uint64_t window_wait(struct ibc_harness *h, struct op_state *s, int timed)
{
	uint64_t start = h->win_next, now;
	unsigned long polls = 0;

	h->win_next += h->win_ticks;
	if (ibc_timer_ticks() > start) {
		if (timed)
			s->late++;
		h->win_late = 1;
		return start;
	}
	/* sleep through most of a long wait (a spinning waiter loses its PU's
	 * share to other processes and then wakes late), spin the rest */
	now = ibc_timer_ticks();
	if (start > now) {
		double left_us = ibc_timer_ticks_to_us(start - now);

		if (left_us > WINDOW_SLEEP_US + WINDOW_SPIN_US) {
			double nap = left_us - WINDOW_SPIN_US;
			struct timespec ts = { (time_t)(nap / 1e6), (long)(fmod(nap, 1e6) * 1000) };

			nanosleep(&ts, NULL);
		}
	}
	while (ibc_timer_ticks() < start)
		ibc_wait_relax(h->wait, &polls);
	return start;
}

/* one iteration of op k: prepare, sync (or window), timed run */
static int iteration(struct ibc_harness *h, struct op_state *s, double *sample)
{
	const struct ibc_harness_op *op = s->op;
	uint64_t t0, t1;
	int rc;

	if (op->prepare != NULL) {
		rc = op->prepare(h, op->arg);
		if (rc != IBC_OK) {
			ibc_error("harness: %s: prepare failed: %s", op->variant, ibc_status_str(rc));
			return rc;
		}
	}
	if (h->win_ticks == 0) {
		rc = sync_step(h);
		if (rc != IBC_OK) {
			ibc_error("harness: sync before %s failed: %s", op->variant, ibc_status_str(rc));
			return rc;
		}
	}
	h->sample_override = -1;
	h->win_late = 0;
	t0 = h->win_ticks != 0 ? window_wait(h, s, sample != NULL) : ibc_timer_ticks();
	rc = op->run(h, op->arg);
	t1 = ibc_timer_ticks();
	if (rc != IBC_OK) {
		ibc_error("harness: %s: iteration failed: %s", op->variant, ibc_status_str(rc));
		return rc;
	}
	if (sample != NULL) {
		*sample = (h->sample_override >= 0 ? h->sample_override : ibc_timer_ticks_to_us(t1 - t0)) *
			  op_scale(op);
		/* window mode: a late start is marked by the sign (reduce() drops
		 * that iteration for every rank and counts it) */
		if (h->win_late)
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
	if (kept == 0) {
		ibc_error("harness: %s: every iteration started late in its window (window too short?)",
			  s->op->variant);
		free(per_iter);
		free(skew);
		free(rank_sum);
		return IBC_ERR_TIMEOUT;
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
	snprintf(c_iters, sizeof(c_iters), "%ld", pt->iters);
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
	snprintf(c_over, sizeof(c_over), "%d", h->oversub);
	fmt_double(c_probe, sizeof(c_probe), h->probe_start_us);

	extra[0] = '\0';
	extra_append(extra, sizeof(extra), "rank_mean_us=%.4f", s->rank_mean);
	for (j = 0; j < p->nfactor_refs; j++) {
		for (k = 0; k < n; k++) {
			if (!all_ops[k].active || strcmp(all_ops[k].op->variant, p->factor_refs[j]) != 0)
				continue;
			if (all_ops[k].op->fanin > 0 && all_ops[k].op->fanin != op->fanin)
				continue;
			snprintf(name, sizeof(name), "factor_vs_%s", p->factor_refs[j]);
			for (char *c = name; *c; c++)
				if (*c == '-')
					*c = '_';
			if (s->st.p50 > 0)
				extra_append(extra, sizeof(extra), "%s=%.4f", name,
					     all_ops[k].st.p50 / s->st.p50);
			break;
		}
	}
	if (h->win_ticks != 0)
		extra_append(extra, sizeof(extra), "window_us=%g;late=%ld;late_iters=%ld", p->window_us,
			     s->late, s->late_iters);
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

static void ops_teardown(struct ibc_harness *h, struct op_state *st, size_t n)
{
	size_t k;
	int rc;

	for (k = 0; k < n; k++) {
		if (st[k].active && st[k].op->teardown != NULL) {
			rc = st[k].op->teardown(h, st[k].op->arg);
			if (rc != IBC_OK)
				ibc_warn("harness: %s: teardown: %s", st[k].op->variant, ibc_status_str(rc));
		}
		st[k].active = 0;
		free(st[k].samples);
		free(st[k].all);
		st[k].samples = st[k].all = NULL;
	}
}

/* fails the job fast so peers blocked in an operation do not hang */
static int run_fail(struct ibc_harness *h, int rc, const char *what)
{
	if (h->boot->size > 1)
		ibc_boot_abort(h->boot, rc, what);
	return rc;
}

static int point_run(struct ibc_harness *h, int index, struct op_state *st, size_t n, int *validate_failed)
{
	const struct ibc_harness_params *p = h->p;
	struct ibc_boot *b = h->boot;
	struct ibc_harness_point pt = { 0 };
	long iters, warmup, i, want;
	size_t j, k, nactive = 0;
	int rc, agreed;
	double t_start, per_iter, elapsed;

	pt.index = index;
	pt.bytes = p->sizes[index];
	ibc_harness_defaults(p->kind, pt.bytes, &iters, &warmup);
	if (p->iters > 0)
		iters = p->iters;
	if (p->warmup >= 0)
		warmup = p->warmup;
	pt.iters = iters;
	pt.warmup = warmup;

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
			ops_teardown(h, st, n);
			return agreed;
		}
		st[k].active = 1;
		st[k].valid = -1;
		st[k].late = 0;
		st[k].extra[0] = '\0';
		nactive++;
	}
	if (nactive == 0)
		return IBC_OK;

	/* warm-up, timed as a whole to fit the budget; its first iteration alone
	 * caps the warm-up itself at a fifth of the budget */
	if (h->win_ticks != 0 && (rc = window_begin(h)) != IBC_OK)
		goto err_teardown;
	t_start = ibc_timer_now_us();
	if (warmup > 0 && p->budget_s > 0) {
		for (k = 0; k < n; k++)
			if (st[k].active && (rc = iteration(h, &st[k], NULL)) != IBC_OK)
				goto err_teardown;
		want = warmup;
		per_iter = ibc_timer_now_us() - t_start;
		if (b->rank == 0 && per_iter * (double)warmup > 0.2 * p->budget_s * 1e6) {
			want = (long)(0.2 * p->budget_s * 1e6 / per_iter);
			if (want < 1)
				want = 1;
		}
		rc = ibc_boot_bcast(b, &want, sizeof(want), 0);
		if (rc != IBC_OK)
			goto err_teardown;
		warmup = want;
		pt.warmup = warmup;
		if (h->win_ticks != 0 && (rc = window_begin(h)) != IBC_OK)
			goto err_teardown;
	}
	for (i = warmup > 0 && p->budget_s > 0 ? 1 : 0; i < warmup; i++)
		for (k = 0; k < n; k++)
			if (st[k].active && (rc = iteration(h, &st[k], NULL)) != IBC_OK)
				goto err_teardown;
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
		goto err_teardown;
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
			goto err_teardown;
		}
	}
	if (h->win_ticks != 0 && (rc = window_begin(h)) != IBC_OK)
		goto err_teardown;
	t_start = ibc_timer_now_us();
	for (i = 0; i < iters; i++) {
		/* window mode: a fresh common start now and then, so one late
		 * start does not make the following ones late too */
		if (h->win_ticks != 0 && i > 0 && i % WINDOW_RESYNC == 0 &&
		    (rc = window_begin(h)) != IBC_OK)
			goto err_teardown;
		/* interleaved, and rotated so no variant always runs first or
		 * right after the same neighbour (position effects cancel) */
		for (j = 0; j < n; j++) {
			k = (j + (size_t)i) % n;
			if (st[k].active && (rc = iteration(h, &st[k], &st[k].samples[i])) != IBC_OK)
				goto err_teardown;
		}
	}
	elapsed = ibc_timer_now_us() - t_start;

	for (k = 0; k < n; k++) {
		if (!st[k].active)
			continue;
		if (p->validate && st[k].op->validate != NULL) {
			int v = st[k].op->validate(h, st[k].op->arg);

			if (ibc_boot_agree(b, v, &agreed) != IBC_OK) {
				rc = IBC_ERR_CLOSED;
				goto err_teardown;
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
			rc = st[k].op->extra(h, st[k].op->arg, st[k].extra, sizeof(st[k].extra));
			if (rc != IBC_OK)
				st[k].extra[0] = '\0';
		}
		if (h->win_ticks != 0) {
			double late = (double)st[k].late, *lates = NULL;
			int r;

			if (b->rank == 0 && (lates = calloc((size_t)b->size, sizeof(double))) == NULL) {
				rc = IBC_ERR_NOMEM;
				goto err_teardown;
			}
			rc = ibc_boot_gather(b, &late, lates, sizeof(double), 0);
			if (rc == IBC_OK && b->rank == 0)
				for (st[k].late = 0, r = 0; r < b->size; r++)
					st[k].late += (long)lates[r];
			free(lates);
			if (rc != IBC_OK)
				goto err_teardown;
		}
		rc = samples_gather(b, st[k].samples, st[k].all, (size_t)iters);
		if (rc != IBC_OK)
			goto err_teardown;
		if (b->rank == 0 && (rc = reduce(h, &st[k], iters)) != IBC_OK)
			goto err_teardown;
	}
	if (b->rank == 0) {
		for (k = 0; k < n; k++) {
			if (!st[k].active)
				continue;
			rc = row_write(h, &st[k], st, n, &pt);
			if (rc != IBC_OK)
				goto err_teardown;
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
	ops_teardown(h, st, n);
	return IBC_OK;

err_teardown:
	ops_teardown(h, st, n);
	return run_fail(h, rc, "a measurement step failed");
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
	rc = ibc_timer_init();
	if (rc != IBC_OK)
		return rc;
	run_id_make(p, h.run_id, sizeof(h.run_id));
	if (boot->size > 1)
		(void)ibc_boot_bcast(boot, h.run_id, sizeof(h.run_id), 0);
	snprintf(h.launcher, sizeof(h.launcher), "%s",
		 p->launcher != NULL ? p->launcher : boot->ops->name);

	h.oversub = ibc_topo_oversubscribed(boot->local_size) == 1;
	if (p->wait_force == IBC_WAIT_SPIN || p->wait_force == IBC_WAIT_SPIN_YIELD)
		h.wait = (enum ibc_wait)p->wait_force;
	else
		h.wait = ibc_wait_decide(boot->local_size);
	if (p->pin && !h.oversub) {
		pin_rc = ibc_topo_pin(boot->local_rank);
		h.pinned = pin_rc == IBC_OK;
	}

	if (p->window_us > 0) {
		if (boot->num_nodes > 1) {
			if (boot->rank == 0)
				ibc_error("harness: window mode needs one clock: %d nodes (clock offsets are not estimated yet)",
					  boot->num_nodes);
			return IBC_ERR_UNSUPPORTED;
		}
		h.win_ticks = (uint64_t)(p->window_us / ibc_timer_ticks_to_us(1000000) * 1e6);
		if (h.win_ticks == 0)
			h.win_ticks = 1;
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

	rc = sync_open(&h);
	if (rc != IBC_OK)
		goto err_close_rows;
	rc = probe_call(&h, &h.probe_start_us);
	if (rc != IBC_OK)
		goto err_close_rows;
	if (boot->rank == 0) {
		struct ibc_harness_meta_in mi = {
			.p = p, .boot = boot, .run_id = h.run_id, .launcher = h.launcher,
			.wait = ibc_wait_name(h.wait), .oversub = h.oversub,
			.pinned = h.pinned, .pin_asked = p->pin,
			.sync = p->window_us > 0 ? "window (common start per iteration)"
			        : p->sync.fn != NULL && p->sync.name != NULL ? p->sync.name
			        : p->sync.fn != NULL ? "custom"
			        : h.nsync != NULL ? "node-shm-barrier" : "boot-barrier",
			.probe_us = h.probe_start_us,
		};

		rc = ibc_harness_meta_write(&mi);
		if (rc != IBC_OK)
			ibc_warn("harness: meta.csv not written: %s", ibc_status_str(rc));
	}

	for (i = 0; i < (int)p->nsizes; i++) {
		rc = point_run(&h, i, st, n, &validate_failed);
		if (rc != IBC_OK)
			goto err_close_rows;
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
