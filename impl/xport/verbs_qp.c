/* verbs backend: the pieces every other verbs file stands on: error
 * reports, PSNs, the queue table (vq) and the RC/UC QP state transitions
 * INIT -> RTR -> RTS.  The bottom of impl/xport's verbs files: xport_verbs.c
 * (device, open/close, memory, connect), verbs_post.c (posting, completions),
 * verbs_mcast.c and verbs_xrc.c call here; this file calls none of them. */
#define _GNU_SOURCE
#include "xport/verbs_priv.h"

#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RC_TIMEOUT 16       /* 4.096 us * 2^16 = 268 ms: patient under emulation */
#define RC_RETRY 7
#define RC_RNR_RETRY 7      /* infinite */
#define RC_MIN_RNR_TIMER 12 /* 0.64 ms */
#define RC_HOP_LIMIT 64

/* ------------------------------------------------------------ helpers -- */

void ibc_xport_verbs_err(const struct vctx *v, const char *call, int err)
{
	ibc_error("verbs %s: %s failed: %s (errno %d)", v->devname[0] ? v->devname : "?", call,
		  strerror(err), err);
}

int ibc_xport_verbs_status_of_errno(int err)
{
	switch (err) {
	case EOPNOTSUPP:
	case ENOSYS:
	case EPROTONOSUPPORT:
		return IBC_ERR_UNSUPPORTED;
	case ENOMEM:
		return IBC_ERR_NOMEM;
	case EINVAL:
		return IBC_ERR_INVAL;
	case ENODEV:
	case ENOENT:
		return IBC_ERR_NOTFOUND;
	default:
		return IBC_ERR_SYS;
	}
}

uint32_t ibc_xport_verbs_psn_make(const struct vctx *v, uint32_t salt)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t h = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 20) ^
		     ((uint64_t)(unsigned)v->x->rank << 40) ^ salt;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h & 0xffffff;
}

/* ------------------------------------------------------------- queues -- */

int ibc_xport_verbs_vq_add(struct vctx *v, struct ibv_qp *qp, enum vq_kind kind, int peer,
			   struct vq **out)
{
	struct vq *q = calloc(1, sizeof(*q));
	if (!q)
		goto err_nomem;
	q->sq_cap = v->x->params.sq_depth;
	q->slots = calloc(q->sq_cap, sizeof(*q->slots));
	if (!q->slots)
		goto err_free_q;
	if (v->nvqs == v->vqs_cap) {
		uint32_t cap = v->vqs_cap ? v->vqs_cap * 2 : 64;
		struct vq **nv = realloc(v->vqs, cap * sizeof(*nv));
		if (!nv)
			goto err_free_slots;
		v->vqs = nv;
		v->vqs_cap = cap;
	}
	q->qp = qp;
	q->kind = kind;
	q->peer = peer;
	q->node = -1;
	q->index = v->nvqs;
	v->vqs[v->nvqs++] = q;
	v->st.qps++;
	/* our ring plus an estimate of the device's queue buffers: a send WQE
	 * holds a header, the gather list and the inline area; a receive WQE
	 * (none for XRC initiators) a header and the scatter list */
	uint64_t sge_b = 16u * v->x->caps.max_sge;
	uint64_t wq = (uint64_t)q->sq_cap * (64 + sge_b + v->x->caps.max_inline);
	if (kind != VQ_XRC_INI)
		wq += (uint64_t)v->x->params.rq_depth * (16 + sge_b);
	v->st.conn_bytes += (uint64_t)q->sq_cap * sizeof(*q->slots) + sizeof(*q) + wq;
	*out = q;
	return IBC_OK;

err_free_slots:
	free(q->slots);
err_free_q:
	free(q);
err_nomem:
	ibc_error("verbs %s: out of memory for a queue", v->devname);
	return IBC_ERR_NOMEM;
}

void ibc_xport_verbs_vq_destroy(struct vctx *v, struct vq *q)
{
	if (!q)
		return;
	if (q->qp) {
		int err = ibv_destroy_qp(q->qp);
		if (err)
			ibc_xport_verbs_err(v, "ibv_destroy_qp", err);
	}
	if (q->index < v->nvqs && v->vqs[q->index] == q)
		v->vqs[q->index] = NULL;
	/* receives still posted there will never complete: orphan their slots
	 * (kept in use, so a stale completion cannot hit a reused slot) */
	for (uint32_t i = 0; i < v->rslots_cap; i++)
		if (v->rslots[i].used && v->rslots[i].vq == q)
			v->rslots[i].vq = NULL;
	free(q->slots);
	free(q);
}

/* ---------------------------------------------------- QP transitions -- */

int ibc_xport_verbs_qp_init(struct vctx *v, struct ibv_qp *qp, unsigned access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = v->port,
		.qp_access_flags = access,
	};
	int err = ibv_modify_qp(qp, &a,
				IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_modify_qp(INIT)", err);
		return ibc_xport_verbs_status_of_errno(err);
	}
	return IBC_OK;
}

int ibc_xport_verbs_qp_rtr(struct vctx *v, struct ibv_qp *qp, uint32_t dest_qpn,
			   uint32_t rq_psn, const union ibv_gid *dgid, uint16_t dlid,
			   enum ibv_mtu mtu, int is_rc_responder)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = (uint8_t)v->max_rd_atomic,
		.min_rnr_timer = RC_MIN_RNR_TIMER,
		.ah_attr = {
			.dlid = dlid,
			.sl = 0,
			.src_path_bits = 0,
			.port_num = v->port,
		},
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (is_rc_responder)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (v->use_grh) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = (uint8_t)v->gid_index;
		a.ah_attr.grh.hop_limit = RC_HOP_LIMIT;
		a.ah_attr.grh.traffic_class = 0;
	}
	int err = ibv_modify_qp(qp, &a, mask);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_modify_qp(RTR)", err);
		return ibc_xport_verbs_status_of_errno(err);
	}
	return IBC_OK;
}

int ibc_xport_verbs_qp_rts(struct vctx *v, struct ibv_qp *qp, uint32_t sq_psn, int initiator)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = RC_TIMEOUT,
		.retry_cnt = RC_RETRY,
		.rnr_retry = RC_RNR_RETRY,
		.sq_psn = sq_psn,
		.max_rd_atomic = (uint8_t)v->max_rd_atomic,
	};
	int mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN;
	if (initiator)
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	int err = ibv_modify_qp(qp, &a, mask);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_modify_qp(RTS)", err);
		return ibc_xport_verbs_status_of_errno(err);
	}
	return IBC_OK;
}
