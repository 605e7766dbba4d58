/* How iterations start: the sync step (a node's shared-memory barrier or the
 * bootstrap's), the choice of mode, and window mode's schedule on the global
 * clock (see harness.h). */
#include "harness/harness_priv.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WINDOW_SLEEP_US 200    /* window mode: shortest wait worth a nanosleep */
#define WINDOW_SPIN_MAX_US 20000.0 /* the spun end of a wait at most (WINDOW_SPIN_US at least),
				    however late naps end */
#define WINDOW_SLICE_US 1000   /* window mode: longest nap between progress calls */
#define WINDOW_BLOCK_US 2000.0 /* window mode: aim of a block's length */
#define WINDOW_BLOCK_MIN 16    /* ... in rounds, at least (WINDOW_BLOCK_MAX at most) */
#define WINDOW_MAX_US 1e6      /* W never grows beyond a second */
#define WINDOW_MARGIN_US 500.0 /* first anchor: the bcast must reach everyone before it */
#define PROGRESS_EVERY 64      /* polls between progress calls in a spin */
#define WINDOW_TIGHT_US 2.0    /* the end of a spin with no pause and no progress call */
#define IBC_HARNESS_SYNC_TIMEOUT_S 600.0 /* node sync: a rank this late is gone */

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

/* The sync step (node sync on one node) and the mode: window needs a good
 * global clock and ranks that fit the PUs (auto), or is insisted on. */
int ibc_harness_sync_decide(struct ibc_harness *h)
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
	if (b->size > 1 && p->barrier_only != NULL) {
		if (p->sync_mode == IBC_HARNESS_SYNC_WINDOW && b->rank == 0)
			ibc_warn("harness: %s: --sync window not applied: %s", p->suite,
				 p->barrier_only);
		snprintf(h->sync_why, sizeof(h->sync_why), "the suite's: %s", p->barrier_only);
		return IBC_OK;
	}
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

/* the median of v[0..n) (sorts v) */
static double median(double *v, long n)
{
	ibc_stats_sort(v, (size_t)n);
	return ibc_stats_quantile_sorted(v, (size_t)n, 0.5);
}

static void block_rounds_set(struct ibc_harness *h)
{
	double per = 0;
	long r;
	size_t k;

	for (k = 0; k < h->nst; k++)
		if (h->st[k].active && h->st[k].group == h->group)
			per += h->st[k].prime ? 2 * h->st[k].win_us : h->st[k].win_us; /* harness.c */
	r = per > 0 ? (long)(WINDOW_BLOCK_US / per) : WINDOW_BLOCK_MAX;
	h->block_rounds = r < WINDOW_BLOCK_MIN ? WINDOW_BLOCK_MIN : r > WINDOW_BLOCK_MAX ? WINDOW_BLOCK_MAX : r;
}

/* Rank 0: d[k] = the slowest rank's median warm-up time of operation k (0
 * without warm-up); collective. */
int ibc_harness_warm_medians(struct ibc_harness *h, struct op_state *st, size_t n, double *d)
{
	double *mine = calloc(n, sizeof(double)), *all = NULL;
	size_t k;
	int rc = IBC_OK, r;

	if (mine == NULL || (h->boot->rank == 0 && (all = calloc((size_t)h->boot->size * n, sizeof(double))) == NULL))
		rc = IBC_ERR_NOMEM;
	for (k = 0; rc == IBC_OK && k < n; k++)
		if (st[k].active && st[k].nwarm > 0)
			mine[k] = median(st[k].warm, st[k].nwarm);
	if (rc == IBC_OK)
		rc = ibc_boot_gather(h->boot, mine, all, n * sizeof(double), 0);
	for (k = 0; rc == IBC_OK && h->boot->rank == 0 && k < n; k++)
		for (d[k] = 0, r = 0; r < h->boot->size; r++)
			d[k] = fmax(d[k], all[(size_t)r * n + k]);
	free(mine);
	free(all);
	return rc;
}

/* W for an operation whose slowest rank's median time is d: three times
 * that, plus the clock's error twice and 2 us (the harness's own time
 * between operations) */
static double window_of(const struct ibc_harness *h, double d)
{
	return 3 * d + 2 * h->clock.err_us + 2.0;
}

/* The first W of each operation, from the warm-up's medians d (rank 0's,
 * ibc_harness_warm_medians; window_of); its late tolerance a quarter of
 * the median, within [0.2, 2] us. */
int ibc_harness_window_first(struct ibc_harness *h, struct op_state *st, size_t n, const double *d)
{
	const struct ibc_harness_params *p = h->p;
	double *w = calloc(2 * n + 1, sizeof(double));
	size_t k;
	int rc = w == NULL ? IBC_ERR_NOMEM : IBC_OK;

	for (k = 0; rc == IBC_OK && h->boot->rank == 0 && k < n; k++) {
		w[2 * k] = p->window_us > 0 ? p->window_us : window_of(h, d[k]);
		w[2 * k + 1] = p->late_tol_us > 0 ? p->late_tol_us : fmin(2.0, fmax(0.2, d[k] / 4));
	}
	if (rc == IBC_OK) {
		w[2 * n] = WINDOW_MARGIN_US;
		rc = ibc_boot_bcast(h->boot, w, (2 * n + 1) * sizeof(double), 0);
	}
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
	free(w);
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
int ibc_harness_window_anchor(struct ibc_harness *h, int first)
{
	const struct ibc_harness_params *p = h->p;
	size_t n = h->nst, k, m = 2 * n + 1;
	double *mine = calloc(m, sizeof(double)), *all = NULL, *out = calloc(n + 3, sizeof(double));
	int rc = IBC_OK, r;

	if (mine == NULL || out == NULL ||
	    (h->boot->rank == 0 && (all = calloc((size_t)h->boot->size * m, sizeof(double))) == NULL))
		rc = IBC_ERR_NOMEM;
	for (k = 0; rc == IBC_OK && k < n; k++) {
		struct op_state *s = &h->st[k];

		mine[2 * k] = (double)s->block_late;
		if (s->active && s->ndur > 0)
			mine[2 * k + 1] = median(s->dur, s->ndur);
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
		/* the point's budget spent: the timed loop ends here (windows of
		 * long operations, grown by late starts, can cost several times
		 * what the warm-up, timed at the sync step, promised) */
		out[n + 2] = !first && h->budget_end_us > 0 && ibc_timer_now_us() > h->budget_end_us;
	}
	if (rc == IBC_OK)
		rc = ibc_boot_bcast(h->boot, out, (n + 3) * sizeof(double), 0);
	if (rc == IBC_OK) {
		for (k = 0; k < n; k++) {
			h->st[k].win_us = out[k];
			h->st[k].block_late = 0;
			h->st[k].ndur = 0;
		}
		h->margin_us = out[n];
		h->win_next_g = out[n + 1];
		h->win_stop = out[n + 2] != 0;
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
int ibc_harness_window_wait(struct ibc_harness *h, struct op_state *s, int first_of_block,
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
		if (start - now < WINDOW_TIGHT_US) {
			/* the last stretch: clock reads only, so that the start
			 * is not late by part of a pause or a progress call */
			while ((now = ibc_timer_now_us()) < start)
				;
			break;
		}
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
