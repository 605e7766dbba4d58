/* The LoP suite's multicast kernel, rtt-mcast (logp_kernel.h). */
#include "logp/logp_kernel.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"

#include <string.h>

#define RESEND_NS 2000000LL /* rank 0 sends its datagram again after 2 ms */

/* rtt-mcast: the iteration number behind the payload (src's second last
 * 8 bytes) */
static uint64_t *mcast_seq(const struct lk_inst *in)
{
	return (uint64_t *)((unsigned char *)in->src->addr + in->src->len - 2 * SEQ_BYTES);
}

/* rtt-mcast: rank 1's next datagram into the start of its slot (0, 0), in
 * this call's set, or with next (before the call: prepare, or back to back
 * the call before) in the next call's: lk_run moves every rank on a set once
 * a call, so the datagram a call awaits is in its set_off */
int ibc_logp_mcast_recv_post(struct ibc_xport *x, struct lk_inst *in, int next)
{
	size_t off = next ? ibc_logp_set_off(in, (in->set + 1) % in->nsets) : in->set_off;
	struct ibc_xport_sge sge = { (uintptr_t)in->mr->addr + off + ibc_logp_slot_of(in, 0, 0),
				     (uint32_t)in->slot, in->mr->lkey };
	struct ibc_xport_recv_wr rw = { .wr_id = LK_TAG, .peer = IBC_XPORT_PEER_ANY,
					.mcast = in->grp, .num_sge = 1, .sge = &sge };
	int posted, rc = ibc_xport_recv_post(x, &rw, 1, &posted);

	in->mc_posted = rc == IBC_OK;
	return rc;
}

/* rtt-mcast, rank 1: the datagram of iteration seq (m bytes, then seq);
 * one of an earlier iteration (rank 0 sent it again, and both copies came)
 * is dropped and the receive posted again */
static int mcast_await(struct ibc_xport *x, struct lk_inst *in, uint64_t seq)
{
	const unsigned char *b = (const unsigned char *)in->mr->addr + in->set_off +
				 ibc_logp_slot_of(in, 0, 0);
	struct ibc_xport_wc wc;
	uint64_t got;
	int rc;

	for (;;) {
		rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_RECV, WAIT_NS, &wc);
		if (rc == IBC_OK) /* the receive is consumed, whatever its status */
			in->mc_posted = 0;
		if (rc == IBC_OK && wc.status != IBC_OK) {
			ibc_error("logp: rtt-mcast: a multicast receive failed: %s", wc.reason);
			rc = wc.status;
		}
		if (rc != IBC_OK)
			return rc;
		if (wc.byte_len != in->m + SEQ_BYTES) {
			ibc_error("logp: rtt-mcast: a datagram of %u bytes, not %zu", wc.byte_len,
				  in->m + SEQ_BYTES);
			return IBC_ERR_PROTO;
		}
		memcpy(&got, b + in->m, sizeof(got));
		if (got == seq)
			return IBC_OK;
		in->stale++;
		rc = ibc_logp_mcast_recv_post(x, in, 0);
		if (rc != IBC_OK)
			return rc;
	}
}

/* rtt-mcast, rank 0: the datagram of iteration seq (m bytes, then seq) to
 * the group; *posts counts it for the reap */
static int mcast_send(struct ibc_xport *x, struct lk_inst *in, const struct lk_arg *a,
		      uint64_t seq, int *posts)
{
	struct ibc_xport_sge sge[2];
	struct ibc_xport_wr wr;
	int rc;

	*mcast_seq(in) = seq;
	ibc_logp_msg_wr(x, in, a, 1, 0, 0, &sge[0], &wr);
	sge[1] = (struct ibc_xport_sge){ (uintptr_t)mcast_seq(in), SEQ_BYTES, in->src->lkey };
	wr.opcode = IBC_XPORT_OP_MCAST_SEND;
	wr.mcast = in->grp;
	wr.num_sge = 2;
	rc = ibc_logp_post(x, &wr, 1, 0);
	*posts += rc == IBC_OK;
	return rc;
}

/* rtt-mcast, rank 0: rank 1's write back of datagram seq into w (then
 * cleared unless keep), sending the datagram again every RESEND_NS without
 * it (counted, resent), as RGM's root does on a NAK, until WAIT_NS */
static int mcast_answer(struct ibc_xport *x, struct lk_inst *in, const struct lk_arg *a,
			uint64_t *w, uint64_t seq, int keep, int *posts)
{
	int64_t since = 0;
	int tries = 1, rc;

	for (;;) {
		rc = ibc_xport_wait_u64(x, w, FLAG_MIN, RESEND_NS, NULL);
		if (rc != IBC_ERR_TIMEOUT)
			break;
		if (since == 0) /* no clock read before the first resend */
			since = ibc_timer_mono_ns() - RESEND_NS;
		if (ibc_timer_mono_ns() - since > WAIT_NS) {
			ibc_error("logp: rtt-mcast: no answer from rank 1 to %d datagrams of iteration "
				  "%llu", tries, (unsigned long long)seq);
			return rc;
		}
		in->resent++;
		rc = ibc_logp_reap(x, IBC_XPORT_CQ_SEND, *posts); /* before the send queue fills */
		*posts = 0;
		if (rc == IBC_OK)
			rc = mcast_send(x, in, a, seq, posts);
		if (rc != IBC_OK)
			return rc;
		tries++;
	}
	if (rc == IBC_OK && !keep)
		__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	return rc;
}

/* rtt-mcast, rank 0: the write back still due from the back-to-back
 * loop's last run awaited (its datagram sent again if lost: rank 1 waits
 * for it) and cleared; the suite calls it after the loop (b2b_end) */
int ibc_logp_mcast_settle(struct ibc_xport *x, struct lk_inst *in, const struct lk_arg *a)
{
	uint64_t *w = in->mc_due;
	int posts = 0, rc;

	if (w == NULL)
		return IBC_OK;
	in->mc_due = NULL;
	rc = mcast_answer(x, in, a, w, in->seq, 0, &posts); /* after the loop: its last */
	return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, posts) : rc;
}

/* RTT of a multicast datagram (m bytes and the iteration) from rank 0 to
 * the group of ranks 0 and 1, and rank 1's write back: RGM's release,
 * then a gather step.  A datagram may be lost: rank 0 sends it again
 * (mcast_answer).  Each run is the next iteration on both ranks (in->seq).
 *
 * Back to back (in->b2b) no prepare runs between: rank 1 posts its next
 * receive before its write back releases rank 0's next datagram, and rank 0
 * clears the flags even when validated.  And rank 0 turns around as RGM's
 * root does, in one call: it awaits the write back of the call before
 * (in->mc_due), sends this call's datagram, and leaves its write back due:
 * the next call awaits it, and ibc_logp_mcast_settle the last call's after
 * the loop (untimed: the loop's mean so leaves out one write back of its
 * n).  A root that returned to the loop between a write back and the next
 * datagram read 0.15-0.2 us slower a round trip than RGM at N = 2 on the
 * AMD Turin host (docs/model.md, "The root's turnaround"). */
int ibc_logp_run_rtt_mcast(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a)
{
	struct ibc_xport *x = o->ctx->x;
	uint64_t seq = ++in->seq, t0, *w = ibc_logp_flag_of(in, 1, 0);
	int rc = IBC_OK, posts = 0;

	if (x->rank == 1) {
		rc = in->mc_posted ? IBC_OK : ibc_logp_mcast_recv_post(x, in, 0);
		if (rc == IBC_OK)
			rc = mcast_await(x, in, seq);
		if (rc == IBC_OK && in->b2b)
			rc = ibc_logp_mcast_recv_post(x, in, 1);
		return rc == IBC_OK ? ibc_logp_msg_send(x, in, a, 0, 1) : rc;
	}
	if (x->rank != 0)
		return IBC_OK;
	if (in->b2b) {
		if (in->mc_due != NULL)
			rc = mcast_answer(x, in, a, in->mc_due, seq - 1, 1, &posts);
		if (rc == IBC_OK)
			rc = mcast_send(x, in, a, seq, &posts);
		if (rc == IBC_OK && in->mc_due != NULL) /* after the datagram: off its way */
			__atomic_store_n(in->mc_due, 0, __ATOMIC_RELAXED);
		in->mc_due = rc == IBC_OK ? w : NULL;
		return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, posts) : rc;
	}
	t0 = ibc_timer_ticks();
	rc = mcast_send(x, in, a, seq, &posts);
	if (rc == IBC_OK)
		rc = mcast_answer(x, in, a, w, seq, in->validate, &posts);
	if (rc == IBC_OK)
		ibc_harness_sample_set(o->h, ibc_timer_ticks_to_us(ibc_timer_ticks() - t0));
	return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, posts) : rc;
}
