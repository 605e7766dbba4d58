/* The LoP suite's kernels (logp_suite.h) on the suite driver: set-up, the
 * kernels' timed iterations, validation and the table (the message
 * primitives: logp_msg.c; rtt-mcast: logp_mcast.c; logp_kernel.h). */
#include "logp/logp_suite.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/stats.h"
#include "core/timer.h"
#include "logp/logp_fits.h"
#include "logp/logp_kernel.h"
#include "logp/logp_pool.h"
#include "xport/xport.h"

#include <stdlib.h>
#include <string.h>

static const struct lk_arg *arg_of(const struct ibc_suite_op *o)
{
	return o->v->arg;
}

/* the kernels over the receive pool the collectives send on (logp_pool.c):
 * rtt-pool-1n, and the exchange of sends xchg-pool */
static int uses_pool(const struct lk_arg *a)
{
	return a->kind == LK_RTT_POOL || (a->kind == LK_XCHG && !a->write);
}

/* a kernel with a back-to-back loop (paper_us, b2b_p50_us) beside its
 * timed iterations: the round trips a collective's rounds are made of,
 * each run the next with nothing between (the write kernels without a
 * readout, rtt-mcast and the exchanges) */
static int has_b2b(const struct lk_arg *a)
{
	return (a->kind == LK_RTT_1N && a->write && !a->readout) || a->kind == LK_RTT_MCAST ||
	       a->kind == LK_XCHG;
}

/* the kernels whose messages rotate over LK_SETS sets of slots (lk_inst):
 * the write round trips, rtt-mcast and the write exchanges, the figures the
 * model costs write rounds, RGM's release and the exchange rounds of writes
 * by (not the readout round trips: one call at a time, nothing back to
 * back) */
static int lk_sets(const struct lk_arg *a)
{
	return ((a->kind == LK_RTT_1N || a->kind == LK_RTT_N1) && a->write && !a->readout) ||
	       a->kind == LK_RTT_MCAST || (a->kind == LK_XCHG && a->write);
}

/* a kernel between ranks 0 and 1 alone (p = 1), or on rank 0 alone: no
 * peers swept */
static int p_fixed(const struct lk_arg *a)
{
	return a->kind == LK_PRTT || a->kind == LK_RTT_MCAST || a->kind == LK_XCHG ||
	       a->kind >= LK_COPY;
}

static int lk_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long p,
		     char *why, size_t cap)
{
	const struct lk_arg *a = v->arg;
	int n = c->x->size;

	if (n < 2) {
		snprintf(why, cap, "needs 2 ranks or more");
		return IBC_ERR_UNSUPPORTED;
	}
	if (a->kind == LK_RTT_MCAST && !c->x->caps.mcast) {
		snprintf(why, cap, "the transport has no multicast");
		return IBC_ERR_UNSUPPORTED;
	}
	if (!p_fixed(a) && (p < 1 || p > n - 1 || p > MAX_P)) {
		snprintf(why, cap, "p = %ld peers needs N >= %ld ranks", p, p + 1);
		return IBC_ERR_UNSUPPORTED;
	}
	return IBC_OK;
}

/* Posts n receives from peer (the k-th into its slot k). */
static int recv_post(struct ibc_xport *x, const struct lk_inst *in, int from, int n, int list)
{
	struct ibc_xport_sge sge[IBC_LOGP_PRTT_N];
	struct ibc_xport_recv_wr rw[IBC_LOGP_PRTT_N];
	int i, posted, rc = IBC_OK;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibc_xport_sge){ (uintptr_t)in->mr->addr + ibc_logp_slot_of(in, from, i),
						 (uint32_t)in->slot, in->mr->lkey };
		rw[i] = (struct ibc_xport_recv_wr){ .wr_id = LK_TAG, .peer = from, .num_sge = 1,
						    .sge = &sge[i] };
	}
	if (list)
		return ibc_xport_recv_post(x, rw, n, &posted);
	for (i = 0; i < n && rc == IBC_OK; i++)
		rc = ibc_xport_recv_post(x, &rw[i], 1, &posted);
	return rc;
}

/* ------------------------------------------------------------ kernels -- */

static int run_os(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_sge sge[MAX_P];
	struct ibc_xport_wr wrs[MAX_P];
	uint64_t t0, t1;
	int rc;

	if (x->rank == 0 || a->all) {
		ibc_logp_wrs_to_peers(x, in, a, a->write, sge, wrs);
		t0 = ibc_timer_ticks();
		rc = ibc_logp_post(x, wrs, in->p, a->list);
		t1 = ibc_timer_ticks();
		ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(t1 - t0) / in->p);
		return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, in->p) : rc;
	}
	if (!a->write && x->rank <= in->p)
		return ibc_logp_reap(x, IBC_XPORT_CQ_RECV, 1);
	return IBC_OK;
}

static int run_or(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_sge sge[MAX_P], gsge[MAX_P];
	struct ibc_xport_recv_wr rw[MAX_P];
	struct ibc_xport_wr go[MAX_P];
	uint64_t t0, t1;
	int i, rc, posted;

	if (x->rank == 0) {
		for (i = 0; i < in->p; i++) {
			sge[i] = (struct ibc_xport_sge){ (uintptr_t)in->mr->addr + ibc_logp_slot_of(in, i + 1, 0),
							 (uint32_t)in->slot, in->mr->lkey };
			rw[i] = (struct ibc_xport_recv_wr){ .wr_id = LK_TAG, .peer = i + 1, .num_sge = 1,
							    .sge = &sge[i] };
		}
		t0 = ibc_timer_ticks();
		if (a->list) {
			rc = ibc_xport_recv_post(x, rw, in->p, &posted);
		} else {
			for (i = 0, rc = IBC_OK; i < in->p && rc == IBC_OK; i++)
				rc = ibc_xport_recv_post(x, &rw[i], 1, &posted);
		}
		t1 = ibc_timer_ticks();
		ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(t1 - t0) / in->p);
		/* untimed: let the peers send into them */
		ibc_logp_wrs_to_peers(x, in, a, 1, gsge, go);
		if (rc == IBC_OK)
			rc = ibc_logp_post(x, go, in->p, 1);
		if (rc == IBC_OK)
			rc = ibc_logp_reap(x, IBC_XPORT_CQ_SEND, in->p);
		return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_RECV, in->p) : rc;
	}
	if (x->rank > in->p)
		return IBC_OK;
	rc = ibc_logp_msg_wait(x, in, 0, 1);
	return rc == IBC_OK ? ibc_logp_msg_send(x, in, a, 0, 0) : rc;
}

/* readout: the block from peer copied out of its slot, as an all-to-all
 * copies out (or forwards) what a write put in its region; untimed, so its
 * own cost stays copy-peer's, and the next round trip's writes go into
 * lines the reader holds (rtt-write-readout-1n) */
static void readout(const struct lk_inst *in, int from)
{
	const struct lk_msg g = { from, 0, 1 };

	memcpy(in->dst, ibc_logp_msg_in(in, &g), in->m);
}

static int run_rtt_1n(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_sge sge[2 * MAX_P];
	struct ibc_xport_wr wrs[2 * MAX_P];
	uint64_t t0;
	int i, rc, n;

	if (x->rank == 0) {
		n = ibc_logp_wrs_to_peers(x, in, a, a->write, sge, wrs);
		t0 = in->b2b ? 0 : ibc_timer_ticks(); /* back to back the loop times it */
		rc = ibc_logp_post(x, wrs, n, a->list);
		for (i = 0; i < in->p && rc == IBC_OK; i++)
			rc = ibc_logp_msg_wait(x, in, i + 1, a->write);
		if (!in->b2b)
			ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(ibc_timer_ticks() - t0) / in->p);
		for (i = 0; i < in->p && rc == IBC_OK && a->readout; i++)
			readout(in, i + 1);
		return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, n) : rc;
	}
	if (x->rank > in->p)
		return IBC_OK;
	rc = ibc_logp_msg_wait(x, in, 0, a->write);
	if (rc == IBC_OK)
		rc = ibc_logp_msg_send(x, in, a, 0, a->write);
	if (rc == IBC_OK && a->readout)
		readout(in, 0);
	return rc;
}

static int run_rtt_n1(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_sge sge[MAX_P], one;
	struct ibc_xport_wr wrs[MAX_P], wr;
	uint64_t t0;
	int i, rc;

	ibc_harness_sample_set(o->h, 0); /* only the peers' round trips count */
	if (x->rank == 0) {
		for (i = 0, rc = IBC_OK; i < in->p && rc == IBC_OK; i++)
			rc = ibc_logp_msg_wait(x, in, i + 1, a->write);
		ibc_logp_wrs_to_peers(x, in, a, a->write, sge, wrs);
		if (rc == IBC_OK)
			rc = ibc_logp_post(x, wrs, in->p, a->list);
		return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, in->p) : rc;
	}
	if (x->rank > in->p)
		return IBC_OK;
	ibc_logp_msg_wr(x, in, a, 0, 0, a->write, &one, &wr);
	t0 = ibc_timer_ticks();
	rc = ibc_logp_post(x, &wr, 1, 0);
	if (rc == IBC_OK)
		rc = ibc_logp_msg_wait(x, in, 0, a->write);
	ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(ibc_timer_ticks() - t0) / in->p);
	return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, 1) : rc;
}

/* PRTT(n, d, s) between ranks 0 and 1, receives posted beforehand (rank 0:
 * one from 1; rank 1: n from 0); rank 0's time in *us. */
static int prtt_once(struct ibc_xport *x, struct lk_inst *in, const struct lk_arg *a, int n,
		     double d_us, double *us)
{
	struct ibc_xport_sge sge;
	struct ibc_xport_wr wr;
	uint64_t t0;
	int i, rc = IBC_OK;

	if (x->rank == 0) {
		ibc_logp_msg_wr(x, in, a, 1, 0, 0, &sge, &wr);
		t0 = ibc_timer_ticks();
		for (i = 0; i < n && rc == IBC_OK; i++) {
			if (in->kmax > 1 && i > 0) /* validated: message i from its own slot */
				ibc_logp_msg_wr(x, in, a, 1, i, 0, &sge, &wr);
			rc = ibc_logp_post(x, &wr, 1, 0);
			if (d_us > 0 && i < n - 1)
				ibc_timer_spin_us(d_us);
		}
		if (rc == IBC_OK)
			rc = ibc_logp_reap(x, IBC_XPORT_CQ_RECV, 1);
		*us = ibc_timer_ticks_to_us(ibc_timer_ticks() - t0);
		return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, n) : rc;
	}
	if (x->rank != 1)
		return IBC_OK;
	rc = ibc_logp_reap(x, IBC_XPORT_CQ_RECV, n);
	return rc == IBC_OK ? ibc_logp_msg_send(x, in, a, 0, 0) : rc;
}

static int prtt_post(struct ibc_xport *x, struct lk_inst *in, int n)
{
	if (x->rank == 0)
		return recv_post(x, in, 1, 1, 0);
	if (x->rank == 1)
		return recv_post(x, in, 0, n, 1);
	return IBC_OK;
}

/* d = PRTT(1, 0, s), the median of a few, measured at set-up (rank 0's) */
static int prtt_delay(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	double t[PRTT_PROBES], us = 0;
	int k, rc = prtt_post(x, in, 1);

	if (rc == IBC_OK)
		rc = ibc_boot_barrier(o->ctx->boot);
	for (k = 0; k < PRTT_PROBES && rc == IBC_OK; k++) {
		rc = prtt_once(x, in, a, 1, 0, &us);
		t[k] = us;
		/* the next round's receives, posted everywhere before it starts */
		if (rc == IBC_OK && k < PRTT_PROBES - 1)
			rc = prtt_post(x, in, 1);
		if (rc == IBC_OK)
			rc = ibc_boot_barrier(o->ctx->boot);
	}
	if (rc == IBC_OK) {
		ibc_stats_sort(t, PRTT_PROBES);
		in->d_us = ibc_stats_quantile_sorted(t, PRTT_PROBES, 0.5);
	}
	return rc;
}

/* --validate, untimed: each copy holds what it copied (what copy-peer's
 * peer wrote is checked as messages, received_check) */
static void copy_check(struct ibc_suite_op *o, struct lk_inst *in, const unsigned char *const *src,
		       int n)
{
	int k;
	size_t i;

	for (k = 0; k < n; k++) {
		const unsigned char *d = in->dst + (size_t)k * in->slot;

		for (i = 0; i < in->m && d[i] == src[k][i]; i++)
			;
		if (i == in->m)
			continue;
		if (in->bad == 0) {
			in->bad_iter = o->iter;
			in->bad_from = 0;
			in->bad_k = k;
			in->bad_off = i;
		}
		in->bad++;
	}
}

/* copy-peer's handshake, untimed: rank 1 writes its next block only once
 * rank 0 has given the slot back (its flag cleared, and checked when
 * validated): without it a rank 0 late by a window, or two calls with
 * nothing between (a lone variant, a prime), lost the next block's flag to
 * the clear and waited for it for ever.  Rank 0 gives it back with a write
 * into rank 1's slot (0, 0); rank 1 awaits that before its next block. */
static int copy_peer_ack(struct ibc_xport *x, struct lk_inst *in, const struct lk_arg *a)
{
	int rc = IBC_OK;

	if (!in->ack_due)
		return IBC_OK;
	if (x->rank == 0) {
		rc = ibc_logp_msg_send(x, in, a, 1, 1);
	} else {
		rc = ibc_xport_wait_u64(x, ibc_logp_flag_of(in, 0, 0), FLAG_MIN, WAIT_NS, NULL);
		__atomic_store_n(ibc_logp_flag_of(in, 0, 0), 0, __ATOMIC_RELAXED);
	}
	in->ack_due = 0;
	return rc;
}

/* c(m): rank 0's memcpy of m bytes into its own buffers (each copy on
 * lines of its own), from its own warm source (copy: an all-to-all's
 * staging and packing; per copy, the mean of COPY_N in a row: one alone is
 * below the timer's resolution) or out of the slot rank 1 has just written
 * (copy-peer: a received block copied out, on shm from the writer's cache;
 * one copy, its first touch of those lines a latency a row of copies would
 * overlap; at a few bytes its p50 is the timer's floor, an upper bound).
 * copy-peer's wait reads the block's last word, its flag, so a block of a
 * line is in rank 0's cache before the copy, as an eager message's is
 * (its payload shares the header's line); copy-peer-flag (readout 2) waits
 * for a flag written behind the block on a line of its own, as HRWG's
 * receiver does, so the copy is the first touch of every line of the
 * block.  The write and its wait are untimed. */
static int run_copy(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	const unsigned char *src[COPY_N];
	int k, n = a->kind == LK_COPY ? COPY_N : 1;
	uint64_t t0, t1;

	if (a->kind == LK_COPY_PEER && x->rank == 1) {
		int rc = copy_peer_ack(x, in, a);

		in->ack_due = 1;
		return rc == IBC_OK ? ibc_logp_msg_send(x, in, a, 0, 1) : rc;
	}
	if (x->rank != 0)
		return IBC_OK;
	src[0] = in->src->addr;
	if (a->kind == LK_COPY_PEER) {
		int rc = in->flags_off > 0 ? ibc_logp_msg_wait(x, in, 1, 1)
					   : ibc_xport_wait_u64(x, ibc_logp_flag_of(in, 1, 0), FLAG_MIN,
								WAIT_NS, NULL);

		if (rc != IBC_OK)
			return rc;
		src[0] = (const unsigned char *)in->mr->addr + ibc_logp_slot_of(in, 1, 0) + in->slot - in->m;
	}
	for (k = 1; k < n; k++)
		src[k] = src[0];
	t0 = ibc_timer_ticks();
	for (k = 0; k < n; k++)
		memcpy(in->dst + (size_t)k * in->slot, src[k], in->m);
	t1 = ibc_timer_ticks();
	ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(t1 - t0) / n);
	if (in->validate)
		copy_check(o, in, src, n);
	if (a->kind != LK_COPY_PEER)
		return IBC_OK;
	in->ack_due = 1;
	if (in->validate) /* the slot is checked and cleared in the next prepare, then given back */
		return IBC_OK;
	__atomic_store_n(ibc_logp_flag_of(in, 1, 0), 0, __ATOMIC_RELAXED);
	return copy_peer_ack(x, in, a);
}

/* xchg-write: ranks r and r ^ 1 write each other's slot at once and each
 * waits for the other's write (a rank without a partner, the last of an odd
 * N, idles): the round of a dissemination barrier, in which every rank
 * sends one write and awaits one.  Rank 0's time from its post to the
 * partner's write in; back to back the loop times it, the pair's sets of
 * slots turning every call (a rank is at most one call ahead of its
 * partner, so a write never lands on a flag not yet cleared).  Readout 2
 * (xchg-write-readout-flag, HRWG's step): the block, then its flag on a
 * line of its own (turning with the slots), and each rank copies the block
 * it received out: after the sample in a timed call, inside the loop back
 * to back. */
static int run_xchg(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_sge sge[2];
	struct ibc_xport_wr wr[2];
	int q = x->rank ^ 1, n, rc;
	uint64_t t0;

	if (q >= in->nranks)
		return IBC_OK;
	n = ibc_logp_wrs_to(x, in, a, q, 1, sge, wr);
	t0 = in->b2b ? 0 : ibc_timer_ticks();
	rc = ibc_logp_post(x, wr, n, 0);
	if (rc == IBC_OK)
		rc = ibc_logp_msg_wait(x, in, q, 1);
	if (x->rank == 0 && !in->b2b)
		ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(ibc_timer_ticks() - t0));
	if (rc == IBC_OK && a->readout)
		readout(in, q);
	return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, n) : rc;
}

static int lk_run(struct ibc_suite_op *o)
{
	struct lk_inst *in = o->inst;
	const struct lk_arg *a = arg_of(o);
	double us = 0;
	int rc;

	in->b2b = o->in_b2b;
	if (in->nsets > 1) { /* this call's set, the same on every rank */
		in->set = (in->set + 1) % in->nsets;
		in->set_off = ibc_logp_set_off(in, in->set);
	}
	switch (a->kind) {
	case LK_OS:
		return run_os(o, in, a);
	case LK_OR:
		return run_or(o, in, a);
	case LK_RTT_1N:
		return run_rtt_1n(o, in, a);
	case LK_RTT_N1:
		return run_rtt_n1(o, in, a);
	case LK_PRTT:
		rc = prtt_once(o->ctx->x, in, a, a->prtt_n, a->prtt_d ? in->d_us : 0, &us);
		if (o->ctx->x->rank == 0)
			ibc_harness_sample_set(o->h, us);
		return rc;
	case LK_RTT_POOL:
		rc = ibc_logp_pool_rtt(in->pool, &us);
		if (o->ctx->x->rank == 0)
			ibc_harness_sample_set(o->h, us);
		return rc;
	case LK_RTT_MCAST:
		return ibc_logp_run_rtt_mcast(o, in, a);
	case LK_XCHG:
		if (a->write)
			return run_xchg(o, in, a);
		rc = ibc_logp_pool_xchg(in->pool, in->b2b ? NULL : &us); /* b2b: the loop times it */
		if (o->ctx->x->rank == 0 && !in->b2b)
			ibc_harness_sample_set(o->h, us);
		return rc;
	case LK_COPY:
	case LK_COPY_PEER:
		return run_copy(o, in, a);
	}
	return IBC_ERR_INVAL;
}

/* ---------------------------------------------------------- validation -- */

static int msg_add(struct lk_msg *l, int n, int me, int out, int from, int to, int k, int write)
{
	if ((out ? from : to) == me)
		l[n++] = (struct lk_msg){ out ? to : from, k, write };
	return n;
}

/* The messages of an iteration that rank me sends (out) or receives, into
 * l (room for p or PRTT's n); returns how many. */
static int msgs_of(const struct lk_arg *a, const struct lk_inst *in, int me, int out,
		   struct lk_msg *l)
{
	int n = 0, i, k;

	if (a->kind == LK_PRTT) {
		for (k = 0; k < a->prtt_n; k++)
			n = msg_add(l, n, me, out, 0, 1, k, 0);
		return msg_add(l, n, me, out, 1, 0, 0, 0);
	}
	if (a->kind == LK_COPY)
		return 0;
	if (a->kind == LK_COPY_PEER)
		return msg_add(l, n, me, out, 1, 0, 0, 1);
	if (a->kind == LK_XCHG) { /* each pair both ways */
		for (i = 0; i + 1 < in->nranks; i += 2) {
			n = msg_add(l, n, me, out, i, i + 1, 0, a->write);
			n = msg_add(l, n, me, out, i + 1, i, 0, a->write);
		}
		return n;
	}
	if (a->kind == LK_RTT_MCAST) { /* the datagram lands as a receive does */
		n = msg_add(l, n, me, out, 0, 1, 0, 0);
		return msg_add(l, n, me, out, 1, 0, 0, 1);
	}
	for (i = 1; i <= in->p; i++) {
		switch (a->kind) {
		case LK_OS:
			if (a->all) /* to the p next ranks from every rank */
				n = msg_add(l, n, me, out, out ? me : (me - i + in->nranks) % in->nranks,
					    out ? (me + i) % in->nranks : me, 0, a->write);
			else
				n = msg_add(l, n, me, out, 0, i, 0, a->write);
			break;
		case LK_OR: /* the go write, then the peer's send */
			n = msg_add(l, n, me, out, 0, i, 0, 1);
			n = msg_add(l, n, me, out, i, 0, 0, 0);
			break;
		default: /* a round trip either way */
			n = msg_add(l, n, me, out, 0, i, 0, a->write);
			n = msg_add(l, n, me, out, i, 0, 0, a->write);
			break;
		}
	}
	return n;
}

/* the pattern, its last byte (a write's arrival flag) with the low bit set */
static void msg_fill(unsigned char *b, size_t m, uint64_t seed)
{
	ibc_suite_pattern_fill(b, m, seed);
	b[m - 1] = (unsigned char)(ibc_suite_pattern_byte(seed, m - 1) | 1);
}

static size_t msg_check(const unsigned char *b, size_t m, uint64_t seed, size_t *first)
{
	size_t bad = ibc_suite_pattern_check(b, m - 1, seed, first);

	if (b[m - 1] != (unsigned char)(ibc_suite_pattern_byte(seed, m - 1) | 1) && bad++ == 0)
		*first = m - 1;
	return bad;
}

/* the last iteration's arrivals (a write's awaited first: the os kernels'
 * receivers do not wait in the run), its flags cleared for the next */
static int received_check(struct ibc_suite_op *o, struct lk_inst *in)
{
	const struct lk_arg *a = arg_of(o);
	struct ibc_xport *x = o->ctx->x;
	int i, n, rc = IBC_OK;

	if (uses_pool(a)) { /* checked as they arrive (logp_pool.c) */
		in->bad = ibc_logp_pool_bad(in->pool, &in->bad_iter, &in->bad_from, &in->bad_off);
		in->bad_k = 0;
		in->done_iter = 0;
		return IBC_OK;
	}
	n = in->done_iter > 0 ? msgs_of(a, in, x->rank, 0, in->msgs) : 0;

	for (i = 0; i < n && rc == IBC_OK; i++) {
		const struct lk_msg *g = &in->msgs[i];
		size_t off = 0, bad;

		if (g->write)
			rc = ibc_xport_wait_u64(x, ibc_logp_flag_of(in, g->peer, g->k), FLAG_MIN, WAIT_NS, NULL);
		if (rc != IBC_OK) {
			ibc_error("logp: %s: rank %d's message of iteration %ld did not arrive", o->v->name,
				  g->peer, in->done_iter);
			break;
		}
		bad = msg_check(ibc_logp_msg_in(in, g), in->m,
				ibc_suite_pattern_seed(g->peer, x->rank, (uint64_t)in->done_iter,
						       (uint64_t)g->k), &off);
		if (bad > 0 && in->bad == 0) {
			in->bad_iter = in->done_iter;
			in->bad_from = g->peer;
			in->bad_k = g->k;
			in->bad_off = off;
		}
		in->bad += bad;
		if (g->write)
			__atomic_store_n(ibc_logp_flag_of(in, g->peer, g->k), 0, __ATOMIC_RELAXED);
	}
	in->done_iter = 0;
	return rc;
}

/* untimed: the last iteration's arrivals checked, this one's messages filled */
static int validate_prepare(struct ibc_suite_op *o, struct lk_inst *in)
{
	const struct lk_arg *a = arg_of(o);
	int me = o->ctx->x->rank, i, n, rc = received_check(o, in);

	n = msgs_of(a, in, me, 1, in->msgs);
	for (i = 0; i < n && rc == IBC_OK; i++) {
		const struct lk_msg *g = &in->msgs[i];
		uint64_t seed = ibc_suite_pattern_seed(me, g->peer, (uint64_t)o->iter, (uint64_t)g->k);
		unsigned char *b;

		if (uses_pool(a)) {
			b = ibc_logp_pool_payload(in->pool, g->peer);
			ibc_suite_pattern_fill(b, in->m, seed);
		} else {
			b = (unsigned char *)in->src->addr + ibc_logp_slot_of(in, g->peer, g->k);
			msg_fill(b, in->m, seed);
		}
		(void)ibc_suite_corrupt(o, i, n, b, in->m);
	}
	in->done_iter = o->iter;
	if (uses_pool(a))
		ibc_logp_pool_iter_set(in->pool, o->iter);
	return rc;
}

static int lk_validate(struct ibc_suite_op *o)
{
	struct lk_inst *in = o->inst;
	int rc = received_check(o, in);

	if (rc == IBC_OK && in->bad > 0) {
		ibc_error("logp: %s rank %d: %llu wrong bytes at %zu bytes per message; the first at "
			  "byte %zu of message %d from rank %d in iteration %ld", o->v->name,
			  o->ctx->x->rank, (unsigned long long)in->bad, in->m, in->bad_off, in->bad_k,
			  in->bad_from, in->bad_iter);
		rc = IBC_ERR_VALIDATE;
	}
	return rc;
}

/* the receives of the next iteration, before its sync step (validated:
 * after the last one's arrivals are checked and this one's are filled) */
static int lk_prepare(struct ibc_suite_op *o)
{
	struct lk_inst *in = o->inst;
	const struct lk_arg *a = arg_of(o);
	struct ibc_xport *x = o->ctx->x;
	int i, rc = in->validate ? validate_prepare(o, in) : IBC_OK;

	if (rc == IBC_OK && a->kind == LK_COPY_PEER && x->rank == 0)
		rc = copy_peer_ack(x, in, a); /* validated: the slot checked and cleared just now */
	if (rc != IBC_OK)
		return rc;
	if (a->kind == LK_PRTT)
		return prtt_post(x, in, a->prtt_n);
	if (a->kind == LK_RTT_MCAST)
		return x->rank == 1 && !in->mc_posted ? ibc_logp_mcast_recv_post(x, in, 1) : IBC_OK;
	if (a->write || a->kind == LK_OR || uses_pool(a) || a->kind == LK_COPY ||
	    a->kind == LK_COPY_PEER || x->rank > in->p)
		return IBC_OK;
	if (x->rank != 0)
		return recv_post(x, in, 0, 1, 0);
	if (a->kind == LK_OS)
		return IBC_OK;
	for (i = 1; i <= in->p && rc == IBC_OK; i++)
		rc = recv_post(x, in, i, 1, 0);
	return rc;
}

/* after the back-to-back loop: rtt-mcast's last write back (rank 0) */
static int lk_b2b_end(struct ibc_suite_op *o)
{
	struct lk_inst *in = o->inst;

	return in != NULL ? ibc_logp_mcast_settle(o->ctx->x, in, arg_of(o)) : IBC_OK;
}

static int lk_teardown(struct ibc_suite_op *o)
{
	struct lk_inst *in = o->inst;

	if (in == NULL)
		return IBC_OK;
	if (in->pool)
		(void)ibc_logp_pool_close(in->pool);
	if (in->grp)
		(void)ibc_xport_mcast_leave(o->ctx->x, in->grp);
	if (in->mr)
		(void)ibc_xport_mr_dereg(o->ctx->x, in->mr);
	if (in->src)
		(void)ibc_xport_mr_dereg(o->ctx->x, in->src);
	free(in->rd);
	free(in->msgs);
	free(in->dst);
	free(in->umem);
	free(in);
	o->inst = NULL;
	return IBC_OK;
}

/* the slots peers write into: mr_alloc'd (on shm a shared segment: a
 * write is a store), or user memory registered with mr_reg (on shm
 * reached by process_vm_writev; what DE and the rendezvous write into) */
static int slots_alloc(struct ibc_xport *x, struct lk_inst *in, int user, size_t len)
{
	unsigned acc = IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE;

	if (!user)
		return ibc_xport_mr_alloc(x, len, acc, &in->mr);
	if (!x->caps.user_mem)
		return IBC_ERR_UNSUPPORTED;
	if (posix_memalign(&in->umem, 4096, len) != 0) {
		in->umem = NULL;
		return IBC_ERR_NOMEM;
	}
	memset(in->umem, 0, len);
	return ibc_xport_mr_reg(x, in->umem, len, acc, &in->mr);
}

static int lk_setup(struct ibc_suite_op *o)
{
	const struct lk_arg *a = arg_of(o);
	struct ibc_xport *x = o->ctx->x;
	struct lk_inst *in;
	size_t slots, span;
	int rc;

	if (a->inl && o->pt->bytes > x->caps.max_inline)
		return IBC_ERR_UNSUPPORTED; /* inline only up to the transport's inline size */
	if (a->kind == LK_RTT_MCAST &&
	    (o->pt->bytes > 0 ? o->pt->bytes : 1) + SEQ_BYTES > x->caps.mcast_mtu)
		return IBC_ERR_UNSUPPORTED; /* a datagram: up to the multicast MTU */
	in = calloc(1, sizeof(*in));
	if (in == NULL)
		return IBC_ERR_NOMEM;
	o->inst = in;
	in->m = o->pt->bytes > 0 ? o->pt->bytes : 1;
	in->slot = PAD8(in->m);
	if (a->kind >= LK_COPY) /* each copy of a sample on lines of its own */
		in->slot = (in->m + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
	if (a->kind == LK_RTT_MCAST) /* room for the datagram's iteration */
		in->slot += SEQ_BYTES;
	in->p = p_fixed(a) ? 1 : (int)o->fanin;
	in->nranks = x->size;
	in->validate = o->ctx->cli->validate;
	in->kmax = in->validate && a->kind == LK_PRTT ? a->prtt_n : 1;
	/* an iteration's messages at one rank: 2 per peer, or PRTT's n + 1 */
	in->msgs = calloc((size_t)(2 * in->p + IBC_LOGP_PRTT_N + 1), sizeof(*in->msgs));
	if (uses_pool(a)) { /* its own transport and buffers (logp_pool.c) */
		rc = in->msgs == NULL ? IBC_ERR_NOMEM
				      : ibc_logp_pool_open(o->ctx->boot, x, o->v->name, in->m, in->p,
							   in->validate, &in->pool);
		if (rc != IBC_OK)
			(void)lk_teardown(o);
		return rc;
	}
	in->rd = calloc((size_t)x->size, sizeof(*in->rd));
	if (a->kind >= LK_COPY || a->readout)
		in->dst = malloc(a->kind >= LK_COPY ? in->slot * COPY_N : in->m);
	rc = in->rd == NULL || in->msgs == NULL || ((a->kind >= LK_COPY || a->readout) && !in->dst)
		     ? IBC_ERR_NOMEM : IBC_OK;
	slots = in->slot * (size_t)x->size * (size_t)in->kmax;
	in->nsets = lk_sets(a) ? LK_SETS : 1;
	if (a->readout == 2) /* the flag lines behind the slots (each set's) */
		in->flags_off = (slots + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
	span = in->flags_off > 0 ? in->flags_off + (size_t)x->size * CACHE_LINE : slots;
	in->set_len = in->nsets > 1 ? (span + LK_SET_ALIGN - 1) / LK_SET_ALIGN * LK_SET_ALIGN : span;
	if (rc == IBC_OK)
		rc = slots_alloc(x, in, a->user, in->set_len * (size_t)in->nsets);
	/* the message(s), (rtt-mcast: the iteration,) then 8 bytes of ones: a
	 * flag's source */
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, (in->validate ? slots : in->slot) + 8 +
					(a->kind == LK_RTT_MCAST ? SEQ_BYTES : 0),
					IBC_XPORT_ACCESS_LOCAL_WRITE, &in->src);
	if (rc == IBC_OK) {
		memset(in->mr->addr, 0, in->mr->len);
		memset((unsigned char *)in->src->addr + in->src->len - 8, 0xff, 8);
		memset(in->src->addr, 1, in->m); /* the last byte (1) marks arrival */
		if (in->validate && a->kind == LK_COPY_PEER && x->rank == 0) /* copy_peer_ack's */
			memset((unsigned char *)in->src->addr + ibc_logp_slot_of(in, 1, 0), 1, in->m);
		rc = ibc_xport_rdesc_allgather(x, &in->mr->rdesc, in->rd);
	}
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, NULL);
	if (rc == IBC_OK && a->kind == LK_PRTT && a->prtt_d)
		rc = prtt_delay(o, in, a);
	if (rc == IBC_OK && a->kind == LK_RTT_MCAST) /* joined before the first datagram */
		rc = ibc_xport_mcast_join_new(x, (uint32_t)o->pt->bytes, x->rank <= 1, &in->grp);
	if (rc != IBC_OK)
		(void)lk_teardown(o);
	return rc;
}

static int lk_extra(struct ibc_suite_op *o, char *buf, size_t cap)
{
	const struct lk_arg *a = arg_of(o);
	struct lk_inst *in = o->inst;
	static const char *const kinds[] = { "os", "or", "rtt-1n", "rtt-n1", "prtt" };
	char sets[24] = "";

	if (in->nsets > 1)
		snprintf(sets, sizeof(sets), ";sets=%d", in->nsets);
	if (a->kind == LK_RTT_POOL)
		snprintf(buf, cap, "kernel=rtt-1n;op=send;post=single;via=receive-pool;p=%d", in->p);
	else if (a->kind == LK_RTT_MCAST)
		snprintf(buf, cap,
			 "kernel=rtt-mcast;op=mcast;back=write;p=1;b2b_root=await-send;resent=%llu;"
			 "stale=%llu%s",
			 (unsigned long long)in->resent, (unsigned long long)in->stale, sets);
	else if (a->kind == LK_XCHG)
		snprintf(buf, cap, "kernel=xchg;op=%s;p=1;pairs=%d%s%s",
			 a->write ? "write" : "send;via=receive-pool", in->nranks / 2,
			 a->readout == 2 ? ";readout=1;flag=own-line" : "", sets);
	else if (a->kind >= LK_COPY)
		snprintf(buf, cap, "kernel=copy;op=copy;from=%s;p=1%s",
			 a->kind == LK_COPY ? "own" : "peer", a->readout == 2 ? ";flag=own-line" : "");
	else if (a->kind == LK_PRTT)
		snprintf(buf, cap, "kernel=prtt;op=send;n=%d;d_us=%.3f", a->prtt_n,
			 a->prtt_d ? in->d_us : 0.0);
	else
		snprintf(buf, cap, "kernel=%s;op=%s;post=%s;inline=%d;p=%d;target=%s%s%s%s",
			 kinds[a->kind], a->kind == LK_OR ? "recv" : a->write ? "write" : "send",
			 a->list ? "list" : "single", a->inl, in->p, a->user ? "user" : "mr_alloc",
			 a->readout == 2 ? ";readout=1;flag=own-line" : a->readout ? ";readout=1" : "",
			 a->all ? ";posters=all" : "", sets);
	return IBC_OK;
}

/* ------------------------------------------------------------ table ---- */

static const struct lk_arg args[] = {
	{ LK_OS, 0, 0, 0, 0, 0, 0, 0, 0 }, { LK_OS, 0, 0, 1, 0, 0, 0, 0, 0 },
	{ LK_OS, 0, 1, 0, 0, 0, 0, 0, 0 }, { LK_OS, 0, 1, 1, 0, 0, 0, 0, 0 },
	{ LK_OS, 1, 0, 0, 0, 0, 0, 0, 0 }, { LK_OS, 1, 0, 1, 0, 0, 0, 0, 0 },
	{ LK_OS, 1, 1, 0, 0, 0, 0, 0, 0 }, { LK_OS, 1, 1, 1, 0, 0, 0, 0, 0 },
	{ LK_OR, 0, 0, 0, 0, 0, 0, 0, 0 }, { LK_OR, 0, 1, 0, 0, 0, 0, 0, 0 },
	{ LK_RTT_1N, 0, 0, 0, 0, 0, 0, 0, 0 }, { LK_RTT_1N, 0, 1, 0, 0, 0, 0, 0, 0 },
	{ LK_RTT_N1, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ LK_RTT_1N, 1, 0, 0, 0, 0, 0, 0, 0 }, { LK_RTT_1N, 1, 1, 0, 0, 0, 0, 0, 0 },
	{ LK_RTT_N1, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ LK_PRTT, 0, 0, 0, 1, 0, 0, 0, 0 }, { LK_PRTT, 0, 0, 0, IBC_LOGP_PRTT_N, 0, 0, 0, 0 },
	{ LK_PRTT, 0, 0, 0, IBC_LOGP_PRTT_N, 1, 0, 0, 0 },
	{ LK_COPY, 1, 0, 0, 0, 0, 0, 0, 0 }, { LK_COPY_PEER, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ LK_OS, 1, 0, 0, 0, 0, 1, 0, 0 }, { LK_RTT_POOL, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ LK_RTT_1N, 1, 0, 0, 0, 0, 0, 1, 0 }, { LK_OS, 1, 0, 0, 0, 0, 1, 0, 1 },
	{ LK_RTT_1N, 1, 0, 0, 0, 0, 0, 2, 0 }, { LK_RTT_MCAST, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ LK_COPY_PEER, 1, 0, 0, 0, 0, 0, 2, 0 }, { LK_XCHG, 1, 0, 0, 0, 0, 0, 0, 0 },
	{ LK_XCHG, 0, 0, 0, 0, 0, 0, 0, 0 }, { LK_XCHG, 1, 0, 0, 0, 0, 0, 2, 0 },
};
#define NARGS (sizeof(args) / sizeof(args[0]))

static char names[NARGS][40];
static char descs[NARGS][480];

static size_t variants_fill(struct ibc_suite_variant *out, size_t cap)
{
	static const char *const what[] = {
		[LK_OS] = "o_s(p): the call(s) posting p requests to p peers, per request",
		[LK_OR] = "o_r(p): posting p receives, per request",
		[LK_RTT_1N] = "RTT(p) 1:n: rank 0 to p peers and their answers, per peer",
		[LK_RTT_N1] = "RTT(p) n:1: p peers to rank 0 and its answers, per peer",
		[LK_PRTT] = "LogGP: PRTT(n, d, s) between ranks 0 and 1",
		[LK_RTT_POOL] = "RTT(p) 1:n through the two-sided receive pool the collectives "
				"send on (header, routing, the receive posted again), per peer",
		[LK_RTT_MCAST] = "RTT of a multicast datagram from rank 0 to the group of ranks 0 "
				 "and 1, and rank 1's write back (RGM's release, then a gather "
				 "step; a lost datagram sent again after 2 ms)",
		[LK_XCHG] = "an exchange: ranks r and r ^ 1 write each other's slot (xchg-write), "
			    "or send each other a message through the collectives' receive pool "
			    "(xchg-pool), at once, each awaiting the other's (all pairs at once; "
			    "an odd N's last rank idles): a dissemination or pairwise round",
		[LK_COPY] = "c(s): a local memcpy of s bytes from rank 0's own warm buffer",
		[LK_COPY_PEER] = "c_peer(s): rank 0's memcpy of s bytes rank 1 has just written to it",
	};
	size_t i, n = 0;

	for (i = 0; i < NARGS && n < cap; i++, n++) {
		const struct lk_arg *a = &args[i];
		const char *op = a->write ? "write" : "send";

		switch (a->kind) {
		case LK_OS:
			snprintf(names[i], sizeof(names[i]), "os-%s%s%s%s%s", op, a->list ? "-list" : "",
				 a->inl ? "-inline" : "", a->user ? "-user" : "", a->all ? "-all" : "");
			break;
		case LK_OR:
			snprintf(names[i], sizeof(names[i]), "or%s", a->list ? "-list" : "");
			break;
		case LK_RTT_1N:
		case LK_RTT_N1:
			snprintf(names[i], sizeof(names[i]), "rtt-%s%s-%s%s", op,
				 a->readout == 2 ? "-readout-flag" : a->readout ? "-readout" : "",
				 a->kind == LK_RTT_1N ? "1n" : "n1",
				 a->list ? "-list" : "");
			break;
		case LK_RTT_POOL:
			snprintf(names[i], sizeof(names[i]), "rtt-pool-1n");
			break;
		case LK_RTT_MCAST:
			snprintf(names[i], sizeof(names[i]), "rtt-mcast");
			break;
		case LK_XCHG:
			snprintf(names[i], sizeof(names[i]), "xchg-%s%s", a->write ? "write" : "pool",
				 a->readout == 2 ? "-readout-flag" : "");
			break;
		case LK_PRTT:
			snprintf(names[i], sizeof(names[i]), "loggp-prtt%s",
				 a->prtt_n == 1 ? "1" : a->prtt_d ? "d" : "n");
			break;
		case LK_COPY:
		case LK_COPY_PEER:
			snprintf(names[i], sizeof(names[i]), "copy%s%s", a->kind == LK_COPY ? "" : "-peer",
				 a->readout == 2 ? "-flag" : "");
			break;
		}
		if (a->kind >= LK_COPY)
			snprintf(descs[i], sizeof(descs[i]), "%s%s (the all-to-alls' local copies)",
				 what[a->kind], a->readout == 2 ? ", its flag a write of its own on "
				 "a line of its own, so the copy first touches the block's lines: "
				 "HRWG's received blocks" : "");
		else if (a->kind == LK_RTT_MCAST || a->kind == LK_XCHG)
			snprintf(descs[i], sizeof(descs[i]), "%s%s", what[a->kind],
				 a->readout == 2 ? "; xchg-write-readout-flag: a block, then its flag "
				 "on a line of its own, and each copies the block it received out "
				 "(timed back to back): HRWG's steps" : "");
		else if (a->kind == LK_PRTT)
			snprintf(descs[i], sizeof(descs[i]), "%s: n = %d, d = %s (send/recv)", what[a->kind],
				 a->prtt_n, a->prtt_d ? "PRTT(1, 0, s)" : "0");
		else
			snprintf(descs[i], sizeof(descs[i]), "%s (%s%s%s%s%s%s)", what[a->kind],
				 a->kind == LK_OR ? "recv" : op, a->list ? ", one post list" : ", one call each",
				 a->inl ? ", inline" : "",
				 a->user ? ", into the peers' user memory (mr_reg)" : "",
				 a->readout == 2 ? ", its flag a write of its own on a line of its own, "
						   "each block copied out after it, untimed: HRWG's steps"
				 : a->readout ? ", each block copied out after it, untimed"
					      : "",
				 a->all ? ", every rank to its p next ranks at once, primed: DE's "
					  "writes" : "");
		out[n] = (struct ibc_suite_variant){
			.name = names[i], .desc = descs[i],
			.flags = (p_fixed(a) ? 0 : IBC_SUITE_V_FANIN) |
				 (has_b2b(a) ? 0 : IBC_SUITE_V_NO_B2B) | IBC_SUITE_V_ONE_SIDED |
				 (a->all ? IBC_SUITE_V_PRIMED : 0),
			.timing = a->kind == LK_RTT_N1 || a->all ? IBC_HARNESS_TIME_SLOWEST : IBC_HARNESS_TIME_ROOT,
			.arg = a, .usable = lk_usable, .setup = lk_setup, .prepare = lk_prepare,
			.run = lk_run, .validate = lk_validate, .checked = "bytes", .extra = lk_extra,
			.b2b_end = lk_b2b_end, .teardown = lk_teardown,
		};
	}
	return n;
}

static int after_run(struct ibc_suite_ctx *c)
{
	if (c->boot->rank != 0)
		return IBC_OK;
	return ibc_logp_fits_write(c->cli->out, getenv("IBC_RUN_ID"));
}

static void info(FILE *out)
{
	fprintf(out, "  p (peers) is the fan-in column: --fanin 1,2,4 (default: those of 1..16, 20, "
		     "24, 28, 32, 40, 48, 56, 63 below N)\n"
		     "  fits: DIR/fits.csv (t_rtt, t_ov per kernel, size and statistic; LogGP),\n"
		     "        DIR/logp-derived.csv (L(p), L_list(p), LogGP's o, g, L, G)\n");
}

static double opt_mcast_drop;

static const struct ibc_opt opts[] = {
	{ .name = "mcast-drop", .type = IBC_OPT_DOUBLE, .dest = &opt_mcast_drop, .metavar = "P",
	  .help = "rtt-mcast: probability that a member discards a multicast datagram (seeded; "
		  "the kernel sends it again; shm and verbs)", .min = 0, .max = 1 },
	IBC_OPT_END
};

static void xport_params(struct ibc_xport_params *xp)
{
	xp->mcast_drop = opt_mcast_drop;
	xp->drop_seed = 1;
}

static const size_t dflt_sizes[] = { 1, 4096 };
static const long dflt_p[] = { 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
			       20, 24, 28, 32, 40, 48, 56, 63 };

const struct ibc_suite_def ibc_logp_suite = {
	.name = "logp",
	.prog = "ibchar-logp",
	.summary = "The LoP model of Hoefler & Rehm: o_s(p), o_r(p), RTT(p) 1:n and n:1 for send "
		   "and RDMA write, single posts against post lists, inline against not, per "
		   "number of peers p (the fanin column, 1..N-1), and LogGP's parametrised round "
		   "trips; the run's rows are fitted into fits.csv and logp-derived.csv.",
	.flags = IBC_SUITE_XPORT,
	.kind = IBC_HARNESS_COLLECTIVE,
	.min_ranks = 2,
	.default_ranks = 4,
	.sizes = dflt_sizes,
	.nsizes = sizeof(dflt_sizes) / sizeof(dflt_sizes[0]),
	.fanins = dflt_p,
	.nfanins = sizeof(dflt_p) / sizeof(dflt_p[0]),
	.opts = opts,
	.xport_params = xport_params,
	.variants_fill = variants_fill,
	.b2b_iters = 1000, /* has_b2b's kernels */
	/* the model predicts back-to-back collectives (paper_us) from these
	 * rows' window-mode figures (the round trips: their loops' b2b_p50_us,
	 * where has_b2b); primed, the kernels were faster than those
	 * rows by more than the model held (docs/model.md) */
	.unprimed = "the model's kernels, fitted to back-to-back rows (docs/model.md)",
	.after = after_run,
	.info = info,
};
