/* The channel suite's upper line (channel_suite.h): raw RDMA writes with no
 * channel, rdma-write (a ping-pong) and rdma-write-bw (a window streamed,
 * then an ack); each message's last word is polled, as the channel's
 * trailers are.  And its floor, probe-write: the placement probe's write
 * pattern (harness/probe.c), timed beside the designs in the same run. */
#include "channel/channel_suite_impl.h"

#include "boot/boot.h"
#include "channel/channel.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"
#include "harness/harness.h"
#include "xport/xport.h"

#include <string.h>

int cs_raw_setup(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_rdesc all[2];
	int rc;

	in->slot = PAD8(in->m) + 8;
	rc = ibc_xport_mr_alloc(x, in->slot * (size_t)(in->window > 0 ? in->window : 1) + 64,
				IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE, &in->mr);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, in->slot * (size_t)in->nmsg, IBC_XPORT_ACCESS_LOCAL_WRITE,
					&in->src);
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(x, &in->mr->rdesc, all);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, NULL);
	if (rc == IBC_OK)
		in->peer_rd = all[1 - x->rank];
	return rc;
}

/* source slot k (its m bytes, as prepare left them, and the trailer: seq)
 * as one write into slot k of the peer */
static int raw_write(struct ibc_xport *x, struct cs_inst *in, long k, int signaled)
{
	unsigned char *s = msg_src(in, k);
	struct ibc_xport_sge sge = { (uintptr_t)s, (uint32_t)in->slot, in->src->lkey };
	uint64_t seq = in->seq;

	memcpy(s + in->slot - 8, &seq, 8);
	return ibc_xport_write(x, 1 - x->rank, &sge, 1, in->peer_rd.addr + (uint64_t)k * in->slot,
			       in->peer_rd.rkey,
			       (signaled ? IBC_XPORT_WR_SIGNALED : 0) |
				       (in->slot <= x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0),
			       0xC5);
}

/* one completion of a raw write; a channel's goes to its channel */
static int raw_reap(struct ibc_xport *x)
{
	for (;;) {
		struct ibc_xport_wc wc;
		int rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_SEND, WAIT_NS, &wc);

		if (rc)
			return rc;
		if (!ibc_channel_completion(&wc))
			return wc.status;
	}
}

static int raw_wait(struct ibc_xport *x, struct cs_inst *in, long k)
{
	return ibc_xport_wait_u64(x, (const uint64_t *)((unsigned char *)in->mr->addr +
							(size_t)k * in->slot + in->slot - 8),
				  in->seq, WAIT_NS, NULL);
}

/* rank 0 writes, rank 1 answers with its own message when rank 0's is in */
int cs_raw_lat(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_xport *x = o->ctx->x;
	int rc = IBC_OK;

	in->seq++;
	if (x->rank == 1)
		rc = raw_wait(x, in, 0);
	if (rc == IBC_OK)
		rc = raw_write(x, in, 0, 1);
	if (rc == IBC_OK)
		rc = raw_reap(x);
	if (rc == IBC_OK && x->rank == 0)
		rc = raw_wait(x, in, 0);
	return arrived(o, in, rc);
}

int cs_raw_bw(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_xport *x = o->ctx->x;
	double t0 = ibc_timer_now_us();
	volatile uint64_t *ack = (uint64_t *)((unsigned char *)in->mr->addr +
					      (size_t)in->window * in->slot);
	long k, sig = 0;
	int rc = IBC_OK;

	in->seq++;
	if (x->rank == 0) {
		for (k = 0; k < in->window && rc == IBC_OK; k++) {
			int s = (k % 16) == 15 || k == in->window - 1;

			rc = raw_write(x, in, k, s);
			sig += s;
		}
		while (rc == IBC_OK && sig-- > 0)
			rc = raw_reap(x);
		if (rc == IBC_OK)
			rc = ibc_xport_wait_u64(x, (const uint64_t *)ack, in->seq, WAIT_NS, NULL);
		ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
		return rc;
	}
	/* the last message's trailer: every earlier write has landed */
	rc = raw_wait(x, in, in->window - 1);
	if (rc == IBC_OK) {
		struct ibc_xport_sge sge;
		uint64_t v = in->seq;

		sge.addr = (uintptr_t)&v;
		sge.len = 8;
		sge.lkey = 0;
		rc = ibc_xport_write(x, 0, &sge, 1, in->peer_rd.addr + (uint64_t)in->window * in->slot,
				     in->peer_rd.rkey, IBC_XPORT_WR_SIGNALED | IBC_XPORT_WR_INLINE,
				     0xC5);
		if (rc == IBC_OK)
			rc = raw_reap(x);
	}
	return arrived(o, in, rc);
}

int cs_probe_usable(const struct ibc_suite_ctx *c, char *why, size_t cap)
{
	struct ibc_topo_info ti;

	if (c->boot->num_nodes != 1) {
		snprintf(why, cap, "probe-write needs both ranks on one node (a shared cache line)");
		return IBC_ERR_UNSUPPORTED;
	}
	if (ibc_topo_query(&ti) != IBC_OK || ti.allowed_pus < 2) {
		snprintf(why, cap, "probe-write needs two PUs");
		return IBC_ERR_UNSUPPORTED;
	}
	return IBC_OK;
}

int cs_probe_setup(struct ibc_suite_op *o, struct cs_inst *in)
{
	in->yield = ibc_probe_yield(ibc_harness_wait_get(o->h));
	return ibc_probe_open(o->ctx->boot, 0, 1, &in->probe);
}

int cs_probe_run(struct cs_inst *in)
{
	return ibc_probe_round_write(in->probe, in->yield);
}
