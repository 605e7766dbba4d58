/* The LoP suite's message primitives (logp_kernel.h). */
#include "logp/logp_kernel.h"

#include "core/log.h"
#include "core/status.h"

#include <string.h>

/* readout 2: the line of mr whose word is the flag of source from's block */
static uint64_t *flag_line(const struct lk_inst *in, int from)
{
	return (uint64_t *)((unsigned char *)in->mr->addr + in->set_off + in->flags_off +
			    (size_t)from * CACHE_LINE);
}

/* the message k of this rank into peer's slot (this rank, k) (WRITE) or to
 * its next receive (SEND) */
void ibc_logp_msg_wr(const struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a,
		   int peer, int k, int write, struct ibc_xport_sge *sge, struct ibc_xport_wr *wr)
{
	sge->addr = (uintptr_t)in->src->addr + (in->validate ? ibc_logp_slot_of(in, peer, k) : 0);
	sge->len = (uint32_t)in->m;
	sge->lkey = in->src->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = LK_TAG;
	wr->opcode = write ? IBC_XPORT_OP_WRITE : IBC_XPORT_OP_SEND;
	wr->flags = IBC_XPORT_WR_SIGNALED | (a->inl ? IBC_XPORT_WR_INLINE : 0);
	wr->peer = peer;
	wr->num_sge = 1;
	wr->sge = sge;
	if (write) {
		wr->remote_addr = in->rd[peer].addr + in->set_off + ibc_logp_slot_of(in, x->rank, k) +
				  in->slot - in->m;
		wr->rkey = in->rd[peer].rkey;
	}
}

/* readout 2: the flag behind a write to peer, into this rank's flag line
 * there (8 bytes of ones from the end of src, inline where the transport
 * can) */
static void flag_wr(const struct ibc_xport *x, const struct lk_inst *in, int peer,
		    struct ibc_xport_sge *sge, struct ibc_xport_wr *wr)
{
	sge->addr = (uintptr_t)in->src->addr + in->src->len - 8;
	sge->len = 8;
	sge->lkey = in->src->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = LK_TAG;
	wr->opcode = IBC_XPORT_OP_WRITE;
	wr->flags = IBC_XPORT_WR_SIGNALED | (x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0);
	wr->peer = peer;
	wr->num_sge = 1;
	wr->sge = sge;
	wr->remote_addr = in->rd[peer].addr + in->set_off + in->flags_off + (size_t)x->rank * CACHE_LINE;
	wr->rkey = in->rd[peer].rkey;
}

/* this rank's message to peer, followed by its flag (readout 2), into sge
 * and wrs (room for 2); returns how many requests */
int ibc_logp_wrs_to(const struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a,
		    int peer, int write, struct ibc_xport_sge *sge, struct ibc_xport_wr *wrs)
{
	ibc_logp_msg_wr(x, in, a, peer, 0, write, &sge[0], &wrs[0]);
	if (!write || in->flags_off == 0)
		return 1;
	flag_wr(x, in, peer, &sge[1], &wrs[1]);
	return 2;
}

/* this rank's message to each of its p next ranks (rank 0's to 1..p), each
 * followed by its flag (readout 2); returns the requests in wrs (room for
 * 2 p with a flag) */
int ibc_logp_wrs_to_peers(const struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a,
			int write, struct ibc_xport_sge *sge, struct ibc_xport_wr *wrs)
{
	int i, n = 0;

	for (i = 0; i < in->p; i++)
		n += ibc_logp_wrs_to(x, in, a, (x->rank + i + 1) % in->nranks, write, &sge[n], &wrs[n]);
	return n;
}

/* Waits for n completions on cq (all of them this kernel's). */
int ibc_logp_reap(struct ibc_xport *x, int cq, int n)
{
	struct ibc_xport_wc wc;
	int rc;

	while (n-- > 0) {
		rc = ibc_xport_cq_wait(x, cq, WAIT_NS, &wc);
		if (rc != IBC_OK)
			return rc;
		if (wc.status != IBC_OK) {
			ibc_error("logp: completion error from rank %d: %s", wc.peer, wc.reason);
			return wc.status;
		}
	}
	return IBC_OK;
}

/* One message from peer: its receive completion (SEND), or its last byte
 * in its slot (WRITE), which is then cleared for the next (validated: after
 * the check, in prepare; in the back-to-back loop, here). */
int ibc_logp_msg_wait(struct ibc_xport *x, const struct lk_inst *in, int from, int write)
{
	uint64_t *w;
	int rc;

	if (!write)
		return ibc_logp_reap(x, IBC_XPORT_CQ_RECV, 1);
	w = in->flags_off > 0 ? flag_line(in, from) : ibc_logp_flag_of(in, from, 0);
	rc = ibc_xport_wait_u64(x, w, FLAG_MIN, WAIT_NS, NULL);
	/* a flag line is not checked; back to back, nothing is */
	if (rc == IBC_OK && (!in->validate || in->flags_off > 0 || in->b2b))
		__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	return rc;
}

/* One message to peer, completed. */
int ibc_logp_msg_send(struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a, int peer,
		    int write)
{
	struct ibc_xport_sge sge[2];
	struct ibc_xport_wr wr[2];
	int n = 1, rc;

	ibc_logp_msg_wr(x, in, a, peer, 0, write, &sge[0], &wr[0]);
	if (write && in->flags_off > 0)
		flag_wr(x, in, peer, &sge[n], &wr[n]), n++;
	rc = ibc_logp_post(x, wr, n, 1);
	return rc == IBC_OK ? ibc_logp_reap(x, IBC_XPORT_CQ_SEND, n) : rc;
}
