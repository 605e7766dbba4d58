/* verbs backend, the data path: a list of WRs becomes one chain of
 * ibv_send_wr per run of WRs to the same queue (one ibv_post_send each),
 * receives are posted into slots that remember their queue, and completions
 * are reported with the caller's wr_id, opcode and peer (see xport_verbs.c
 * for the design). */
#define _GNU_SOURCE
#include "xport/verbs_priv.h"

#include "core/log.h"
#include "core/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ posting -- */

static int scratch_send_grow(struct vctx *v, uint32_t n)
{
	if (n <= v->pcap)
		return IBC_OK;
	uint32_t cap = v->pcap ? v->pcap : 16;
	while (cap < n)
		cap *= 2;
	struct ibv_send_wr *w = realloc(v->pwr, cap * sizeof(*w));
	if (!w)
		goto err_nomem;
	v->pwr = w;
	struct ibv_sge *s = realloc(v->psge, (size_t)cap * IBC_XPORT_MAX_SGE * sizeof(*s));
	if (!s)
		goto err_nomem;
	v->psge = s;
	v->pcap = cap;
	return IBC_OK;
err_nomem:
	ibc_error("verbs %s: out of memory for a post list of %u", v->devname, n);
	return IBC_ERR_NOMEM;
}

static int scratch_recv_grow(struct vctx *v, uint32_t n)
{
	if (n <= v->rcap)
		return IBC_OK;
	uint32_t cap = v->rcap ? v->rcap : 16;
	while (cap < n)
		cap *= 2;
	struct ibv_recv_wr *w = realloc(v->rwr, cap * sizeof(*w));
	if (!w)
		goto err_nomem;
	v->rwr = w;
	struct ibv_sge *s = realloc(v->rsge, (size_t)cap * (IBC_XPORT_MAX_SGE + 1) * sizeof(*s));
	if (!s)
		goto err_nomem;
	v->rsge = s;
	v->rcap = cap;
	return IBC_OK;
err_nomem:
	ibc_error("verbs %s: out of memory for a receive list of %u", v->devname, n);
	return IBC_ERR_NOMEM;
}

/* the queue a WR goes to; IBC_ERR_INVAL (logged) if there is none */
static int wr_route(struct vctx *v, const struct ibc_xport_wr *w, struct vq **q, uint32_t *srqn)
{
	struct ibc_xport *x = v->x;
	*srqn = 0;
	if (w->opcode == IBC_XPORT_OP_MCAST_SEND) {
		if (!w->mcast) {
			ibc_error("verbs %s: multicast send without a group", v->devname);
			return IBC_ERR_INVAL;
		}
		*q = ibc_xport_verbs_mcast_vq(w->mcast);
		return IBC_OK;
	}
	if (w->peer < 0 || w->peer >= x->size) {
		ibc_error("verbs %s: post to rank %d out of range (size %d)", v->devname, w->peer,
			  x->size);
		return IBC_ERR_INVAL;
	}
	if (!v->connected[w->peer]) {
		ibc_error("verbs %s: post to rank %d, which is not connected", v->devname, w->peer);
		return IBC_ERR_INVAL;
	}
	if (v->xrc)
		return ibc_xport_verbs_xrc_route(v, w->peer, q, srqn);
	*q = v->peer_vq[w->peer];
	return IBC_OK;
}

/* fills one ibv_send_wr (sge storage at sg); IBC_ERR_INVAL (logged) if malformed */
static int wr_build(struct vctx *v, const struct ibc_xport_wr *w, struct vq *q, uint32_t srqn,
		    struct ibv_send_wr *o, struct ibv_sge *sg, uint32_t *total)
{
	struct ibc_xport *x = v->x;
	uint64_t len = 0;
	if (w->num_sge < 0 || (uint32_t)w->num_sge > x->caps.max_sge || (w->num_sge && !w->sge)) {
		ibc_error("verbs %s: %s with %d gather entries (max %u)", v->devname,
			  ibc_xport_opcode_name(w->opcode), w->num_sge, x->caps.max_sge);
		return IBC_ERR_INVAL;
	}
	for (int i = 0; i < w->num_sge; i++) {
		sg[i].addr = w->sge[i].addr;
		sg[i].length = w->sge[i].len;
		sg[i].lkey = w->sge[i].lkey;
		len += w->sge[i].len;
	}
	memset(o, 0, sizeof(*o));
	o->sg_list = w->num_sge ? sg : NULL;
	o->num_sge = w->num_sge;
	if (w->flags & IBC_XPORT_WR_SIGNALED)
		o->send_flags |= IBV_SEND_SIGNALED;
	if (w->flags & IBC_XPORT_WR_FENCE)
		o->send_flags |= IBV_SEND_FENCE;
	if (w->flags & IBC_XPORT_WR_SOLICITED)
		o->send_flags |= IBV_SEND_SOLICITED;
	int may_inline = 0;
	switch (w->opcode) {
	case IBC_XPORT_OP_WRITE:
		o->opcode = IBV_WR_RDMA_WRITE;
		may_inline = 1;
		break;
	case IBC_XPORT_OP_WRITE_IMM:
		o->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		o->imm_data = htonl(w->imm);
		may_inline = 1;
		break;
	case IBC_XPORT_OP_READ:
		o->opcode = IBV_WR_RDMA_READ;
		break;
	case IBC_XPORT_OP_SEND:
		o->opcode = IBV_WR_SEND;
		may_inline = 1;
		break;
	case IBC_XPORT_OP_SEND_IMM:
		o->opcode = IBV_WR_SEND_WITH_IMM;
		o->imm_data = htonl(w->imm);
		may_inline = 1;
		break;
	case IBC_XPORT_OP_FETCH_ADD:
	case IBC_XPORT_OP_CMP_SWAP:
		if (!x->caps.atomics) {
			ibc_xport_unsupported_set("%s: the device has no atomics", v->devname);
			ibc_error("verbs: %s", ibc_xport_unsupported_reason());
			return IBC_ERR_UNSUPPORTED;
		}
		if (w->num_sge != 1 || w->sge[0].len != 8 || (w->remote_addr & 7)) {
			ibc_error("verbs %s: %s needs one 8-byte result entry and an 8-byte aligned remote address",
				  v->devname, ibc_xport_opcode_name(w->opcode));
			return IBC_ERR_INVAL;
		}
		o->opcode = w->opcode == IBC_XPORT_OP_FETCH_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD
								 : IBV_WR_ATOMIC_CMP_AND_SWP;
		o->wr.atomic.remote_addr = w->remote_addr;
		o->wr.atomic.rkey = w->rkey;
		o->wr.atomic.compare_add = w->compare_add;
		o->wr.atomic.swap = w->swap;
		break;
	case IBC_XPORT_OP_MCAST_SEND:
		if (len > x->caps.mcast_mtu) {
			ibc_error("verbs %s: multicast datagram of %llu bytes exceeds the MTU %u",
				  v->devname, (unsigned long long)len, x->caps.mcast_mtu);
			return IBC_ERR_INVAL;
		}
		o->opcode = IBV_WR_SEND;
		ibc_xport_verbs_mcast_ud(w->mcast, o);
		may_inline = 1;
		break;
	default:
		ibc_error("verbs %s: opcode %d cannot be posted", v->devname, (int)w->opcode);
		return IBC_ERR_INVAL;
	}
	if (o->opcode == IBV_WR_RDMA_WRITE || o->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
	    o->opcode == IBV_WR_RDMA_READ) {
		o->wr.rdma.remote_addr = w->remote_addr;
		o->wr.rdma.rkey = w->rkey;
	}
	if (w->flags & IBC_XPORT_WR_INLINE) {
		if (!may_inline || len > x->caps.max_inline) {
			ibc_error("verbs %s: inline %s of %llu bytes (inline max %u, write/send only)",
				  v->devname, ibc_xport_opcode_name(w->opcode),
				  (unsigned long long)len, x->caps.max_inline);
			return IBC_ERR_INVAL;
		}
		o->send_flags |= IBV_SEND_INLINE;
	}
	if (len > x->caps.max_msg) {
		ibc_error("verbs %s: %s of %llu bytes exceeds the port's max message %llu",
			  v->devname, ibc_xport_opcode_name(w->opcode), (unsigned long long)len,
			  (unsigned long long)x->caps.max_msg);
		return IBC_ERR_INVAL;
	}
	if (q->kind == VQ_XRC_INI)
		o->qp_type.xrc.remote_srqn = srqn;
	*total = (uint32_t)len;
	return IBC_OK;
}

/* posts run [0, n) of prepared WRs to q; *done = how many the device took */
static int run_post(struct vctx *v, struct vq *q, uint64_t first_seq, int n, int *done)
{
	*done = 0;
	if (n == 0)
		return IBC_OK;
	for (int i = 0; i < n - 1; i++)
		v->pwr[i].next = &v->pwr[i + 1];
	v->pwr[n - 1].next = NULL;
	struct ibv_send_wr *bad = NULL;
	int err = ibv_post_send(q->qp, v->pwr, &bad);
	v->st.post_calls++;
	if (!err) {
		*done = n;
		v->st.posted += (uint64_t)n;
		return IBC_OK;
	}
	int k = bad ? (int)(bad - v->pwr) : 0;
	if (k < 0 || k > n)
		k = 0;
	*done = k;
	v->st.posted += (uint64_t)k;
	q->sq_head = first_seq + (uint64_t)k; /* the rest never went out */
	if (err == ENOMEM) {
		ibc_debug("verbs %s: send queue full (ibv_post_send: %s)", v->devname, strerror(err));
		return IBC_ERR_AGAIN;
	}
	ibc_xport_verbs_err(v, "ibv_post_send", err);
	return ibc_xport_verbs_status_of_errno(err);
}

int ibc_xport_verbs_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted)
{
	struct vctx *v = vctx_of(x);
	int rc = scratch_send_grow(v, (uint32_t)n);
	*posted = 0;
	if (rc)
		return rc;
	int i = 0;
	while (i < n) {
		struct vq *q;
		uint32_t srqn;
		rc = wr_route(v, &wrs[i], &q, &srqn);
		if (rc)
			return rc;
		uint64_t first_seq = q->sq_head;
		int k = 0, stop_rc = IBC_OK;
		while (i + k < n) {
			const struct ibc_xport_wr *w = &wrs[i + k];
			struct vq *q2 = q;
			uint32_t srqn2 = srqn;
			if (k > 0) {
				if ((w->opcode == IBC_XPORT_OP_MCAST_SEND) !=
				    (wrs[i].opcode == IBC_XPORT_OP_MCAST_SEND))
					break;
				if (w->opcode == IBC_XPORT_OP_MCAST_SEND ? w->mcast != wrs[i].mcast
									 : w->peer != wrs[i].peer) {
					/* XRC: other processes of the same node share the QP */
					if (!v->xrc || w->opcode == IBC_XPORT_OP_MCAST_SEND)
						break;
					stop_rc = wr_route(v, w, &q2, &srqn2);
					if (stop_rc || q2 != q)
						break;
				}
			}
			if (q->sq_head - q->sq_tail >= q->sq_cap) {
				stop_rc = IBC_ERR_AGAIN;
				break;
			}
			uint32_t total = 0;
			stop_rc = wr_build(v, w, q, srqn2, &v->pwr[k],
					   &v->psge[(size_t)k * IBC_XPORT_MAX_SGE], &total);
			if (stop_rc)
				break;
			uint64_t seq = q->sq_head++;
			struct vq_slot *s = &q->slots[seq % q->sq_cap];
			s->wr_id = w->wr_id;
			s->opcode = (uint8_t)w->opcode;
			s->peer = w->opcode == IBC_XPORT_OP_MCAST_SEND ? -1 : w->peer;
			s->len = total;
			v->pwr[k].wr_id = ((uint64_t)q->index << VQ_SEQ_BITS) | (seq & VQ_SEQ_MASK);
			k++;
		}
		int done;
		rc = run_post(v, q, first_seq, k, &done);
		*posted += done;
		if (rc)
			return rc;
		i += k;
		if (stop_rc) {
			if (stop_rc == IBC_ERR_AGAIN)
				ibc_debug("verbs %s: send queue to rank %d full", v->devname,
					  wrs[i].peer);
			return stop_rc;
		}
	}
	return IBC_OK;
}

static int rslot_get(struct vctx *v, int32_t *out)
{
	if (v->rfree < 0) {
		uint32_t old = v->rslots_cap, cap = old ? old * 2 : 1024;
		struct rslot *ns = realloc(v->rslots, cap * sizeof(*ns));
		if (!ns) {
			ibc_error("verbs %s: out of memory for receive slots", v->devname);
			return IBC_ERR_NOMEM;
		}
		for (uint32_t i = old; i < cap; i++) {
			ns[i] = (struct rslot){ .next_free = i + 1 < cap ? (int32_t)(i + 1) : v->rfree };
		}
		v->rslots = ns;
		v->rslots_cap = cap;
		v->rfree = (int32_t)old;
	}
	int32_t s = v->rfree;
	v->rfree = v->rslots[s].next_free;
	v->rslots[s].used = 1;
	*out = s;
	return IBC_OK;
}

static void rslot_put(struct vctx *v, int32_t s)
{
	free(v->rslots[s].sge);
	v->rslots[s].sge = NULL;
	v->rslots[s].nsge = 0;
	v->rslots[s].used = 0;
	v->rslots[s].next_free = v->rfree;
	v->rfree = s;
}

int ibc_xport_verbs_recv_post(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
			      int *posted)
{
	struct vctx *v = vctx_of(x);
	*posted = 0;
	int rc = scratch_recv_grow(v, 1);
	if (rc)
		return rc;
	/* one at a time: each may go to a different queue; receives are not
	 * what the post-list study measures */
	for (int i = 0; i < n; i++) {
		const struct ibc_xport_recv_wr *w = &wrs[i];
		struct vq *q = NULL;
		struct ibv_srq *srq = NULL;
		int mc = w->mcast != NULL;
		if (w->num_sge < 0 || (uint32_t)w->num_sge > x->caps.max_sge ||
		    (w->num_sge && !w->sge)) {
			ibc_error("verbs %s: receive with %d scatter entries (max %u)", v->devname,
				  w->num_sge, x->caps.max_sge);
			return IBC_ERR_INVAL;
		}
		if (mc) {
			q = ibc_xport_verbs_mcast_vq(w->mcast);
		} else if (w->peer == IBC_XPORT_PEER_ANY || v->xrc) {
			srq = v->xrc ? ibc_xport_verbs_xrc_srq(v) : NULL;
			if (!srq) {
				ibc_xport_unsupported_set("%s: receives from any peer need XRC (a shared receive queue)",
							  v->devname);
				ibc_error("verbs: %s", ibc_xport_unsupported_reason());
				return IBC_ERR_UNSUPPORTED;
			}
		} else if (w->peer < 0 || w->peer >= x->size || !v->peer_vq[w->peer] ||
			   !v->connected[w->peer]) {
			ibc_error("verbs %s: receive for rank %d, which is not connected", v->devname,
				  w->peer);
			return IBC_ERR_INVAL;
		} else {
			q = v->peer_vq[w->peer];
		}
		int32_t s;
		rc = rslot_get(v, &s);
		if (rc)
			return rc;
		v->rslots[s].wr_id = w->wr_id;
		v->rslots[s].vq = q;
		v->rslots[s].mcast = (uint8_t)mc;
		struct ibv_sge *sg = v->rsge;
		int k = 0;
		if (mc) {
			sg[k].addr = (uint64_t)(uintptr_t)v->scratch;
			sg[k].length = VERBS_GRH_BYTES;
			sg[k].lkey = v->scratch_mr->lkey;
			k++;
		}
		for (int j = 0; j < w->num_sge; j++, k++) {
			sg[k].addr = w->sge[j].addr;
			sg[k].length = w->sge[j].len;
			sg[k].lkey = w->sge[j].lkey;
		}
		if (mc && x->params.mcast_drop > 0) {
			/* kept to post the buffer again when drop injection discards
			 * the datagram it receives */
			v->rslots[s].sge = malloc((size_t)k * sizeof(*sg));
			if (!v->rslots[s].sge) {
				rslot_put(v, s);
				return IBC_ERR_NOMEM;
			}
			memcpy(v->rslots[s].sge, sg, (size_t)k * sizeof(*sg));
			v->rslots[s].nsge = (uint8_t)k;
		}
		struct ibv_recv_wr rw = { .wr_id = (uint64_t)s, .sg_list = k ? sg : NULL,
					  .num_sge = k, .next = NULL };
		struct ibv_recv_wr *bad = NULL;
		int err = srq ? ibv_post_srq_recv(srq, &rw, &bad) : ibv_post_recv(q->qp, &rw, &bad);
		if (err) {
			rslot_put(v, s);
			if (err == ENOMEM) {
				ibc_debug("verbs %s: receive queue full", v->devname);
				return IBC_ERR_AGAIN;
			}
			ibc_xport_verbs_err(v, srq ? "ibv_post_srq_recv" : "ibv_post_recv", err);
			return ibc_xport_verbs_status_of_errno(err);
		}
		(*posted)++;
	}
	return IBC_OK;
}

/* ---------------------------------------------------------- completion -- */

static int wc_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return IBC_OK;
	case IBV_WC_WR_FLUSH_ERR:
		return IBC_ERR_CLOSED;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_MW_BIND_ERR:
		return IBC_ERR_INVAL;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return IBC_ERR_TIMEOUT;
	default:
		return IBC_ERR_REMOTE;
	}
}

static void send_wc(struct vctx *v, const struct ibv_wc *in, struct ibc_xport_wc *out)
{
	uint32_t qi = (uint32_t)(in->wr_id >> VQ_SEQ_BITS);
	struct vq *q = qi < v->nvqs ? v->vqs[qi] : NULL;
	memset(out, 0, sizeof(*out));
	out->status = wc_status(in->status);
	out->reason = ibv_wc_status_str(in->status);
	out->peer = -1;
	if (!q) {
		out->wr_id = 0;
		out->opcode = IBC_XPORT_OP_WRITE;
		if (out->status == IBC_OK)
			out->status = IBC_ERR_PROTO;
		ibc_error("verbs %s: completion for an unknown queue (wr_id %#llx)", v->devname,
			  (unsigned long long)in->wr_id);
		return;
	}
	uint64_t low = in->wr_id & VQ_SEQ_MASK;
	uint64_t seq = q->sq_tail + ((low - q->sq_tail) & VQ_SEQ_MASK);
	struct vq_slot *s = &q->slots[seq % q->sq_cap];
	out->wr_id = s->wr_id;
	out->opcode = (enum ibc_xport_opcode)s->opcode;
	out->peer = s->peer;
	if (out->status == IBC_OK && (s->opcode == IBC_XPORT_OP_READ))
		out->byte_len = in->byte_len ? in->byte_len : s->len;
	else if (out->status == IBC_OK && (s->opcode == IBC_XPORT_OP_FETCH_ADD ||
					   s->opcode == IBC_XPORT_OP_CMP_SWAP))
		out->byte_len = 8;
	else
		out->byte_len = s->len;
	if (seq >= q->sq_tail && seq < q->sq_head)
		q->sq_tail = seq + 1;
	if (out->status != IBC_OK && out->status != IBC_ERR_CLOSED)
		ibc_debug("verbs %s: %s to rank %d completed with %s (vendor error %#x)", v->devname,
			  ibc_xport_opcode_name(out->opcode), out->peer, out->reason, in->vendor_err);
}

/* Drop injection: a multicast datagram this process received is discarded
 * with probability params.mcast_drop (seeded), as if it never came: its
 * buffer is posted again and no completion is reported.  1 when dropped. */
static int mcast_drop(struct vctx *v, const struct ibv_wc *in, struct rslot *r)
{
	struct ibv_recv_wr rw, *bad = NULL;
	double p = v->x->params.mcast_drop;

	if (p <= 0 || !r->mcast || !r->sge || in->status != IBV_WC_SUCCESS || !r->vq)
		return 0;
	if (!ibc_xport_drop_draw(&v->rng, p))
		return 0;
	rw = (struct ibv_recv_wr){ .wr_id = in->wr_id, .sg_list = r->sge, .num_sge = r->nsge };
	if (ibv_post_recv(r->vq->qp, &rw, &bad) != 0)
		return 0; /* cannot re-post: report it after all */
	v->st.mcast_dropped++;
	if (r->vq->group)
		r->vq->group->dropped++;
	return 1;
}

/* 0 when the completion was consumed here (an injected drop) */
static int recv_wc(struct vctx *v, const struct ibv_wc *in, struct ibc_xport_wc *out)
{
	int32_t s = (int32_t)in->wr_id;
	memset(out, 0, sizeof(*out));
	out->status = wc_status(in->status);
	out->reason = ibv_wc_status_str(in->status);
	out->peer = -1;
	if (s < 0 || (uint32_t)s >= v->rslots_cap || !v->rslots[s].used) {
		if (out->status == IBC_OK)
			out->status = IBC_ERR_PROTO;
		ibc_error("verbs %s: receive completion for an unknown slot %d", v->devname, s);
		return 1;
	}
	struct rslot *r = &v->rslots[s];
	if (mcast_drop(v, in, r))
		return 0;
	out->wr_id = r->wr_id;
	if (r->mcast) {
		out->opcode = IBC_XPORT_OP_MCAST_RECV;
		out->byte_len = in->byte_len > VERBS_GRH_BYTES ? in->byte_len - VERBS_GRH_BYTES : 0;
	} else if (in->status == IBV_WC_SUCCESS && in->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		/* verbs reports the length of the write (ibv_poll_cq(3)) */
		out->opcode = IBC_XPORT_OP_RECV_WRITE_IMM;
		out->byte_len = in->byte_len;
	} else {
		out->opcode = IBC_XPORT_OP_RECV;
		out->byte_len = in->byte_len;
	}
	if (in->status == IBV_WC_SUCCESS && (in->wc_flags & IBV_WC_WITH_IMM)) {
		out->flags |= IBC_XPORT_WC_IMM;
		out->imm = ntohl(in->imm_data);
	}
	if (r->vq && r->vq->kind == VQ_RC)
		out->peer = r->vq->peer;
	else if (!r->vq && v->xrc && in->status == IBV_WC_SUCCESS)
		out->peer = ibc_xport_verbs_xrc_peer_of_qpn(v, in->src_qp);
	if (out->status != IBC_OK)
		out->byte_len = 0;
	rslot_put(v, s);
	return 1;
}

int ibc_xport_verbs_cq_poll(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n)
{
	struct vctx *v = vctx_of(x);
	struct ibv_wc tmp[16];
	*n = 0;
	for (int which = 0; which < 2 && *n < max; which++) {
		int mask = which == 0 ? IBC_XPORT_CQ_SEND : IBC_XPORT_CQ_RECV;
		if (!(cq & mask))
			continue;
		struct ibv_cq *c = which == 0 ? v->send_cq : v->recv_cq;
		while (*n < max) {
			int want = max - *n < 16 ? max - *n : 16;
			int got = ibv_poll_cq(c, want, tmp);
			if (got < 0) {
				ibc_error("verbs %s: ibv_poll_cq(%s) failed (%d)", v->devname,
					  which == 0 ? "send" : "recv", got);
				return IBC_ERR_SYS;
			}
			for (int i = 0; i < got; i++) {
				if (which == 0)
					send_wc(v, &tmp[i], &wc[*n]);
				else if (!recv_wc(v, &tmp[i], &wc[*n]))
					continue;
				(*n)++;
			}
			if (got < want)
				break;
		}
	}
	return IBC_OK;
}

