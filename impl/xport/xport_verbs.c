/* verbs backend of the transport interface (rdma-core libibverbs).
 *
 * Object life cycle after rdma-core's libibverbs/examples: device list ->
 * context -> PD -> CQs -> MRs -> QPs -> INIT -> RTR -> RTS; teardown in
 * reverse, error paths unwind with labels named for what they undo.
 *
 * Connections: one RC QP per peer (our own rank included: a QP connected to
 * itself), endpoint info {qpn, psn, lid, gid, mtu} exchanged with one
 * allgather of the bootstrap.  RoCE needs a GRH: the GID index is an option,
 * by default a RoCE v2 GID holding an IPv4-mapped address (the one librdmacm
 * and routers use), else the first valid GID.
 *
 * Posting: a list of WRs becomes one chain of ibv_send_wr per run of WRs to
 * the same queue, one ibv_post_send each (the LoP "post list").  Each queue
 * keeps a ring of what was posted so a completion (also an error or flush
 * completion, whose ibv opcode is undefined) reports the caller's wr_id,
 * opcode and peer; a signaled completion retires every earlier slot.
 *
 * Waiting needs no progress here: RDMA writes land without the target
 * doing anything, so progress() is a no-op and ibc_xport_wait_u64 spins on
 * local memory (or spins then yields) as the harness chose.
 *
 * Multicast (UD + librdmacm) is in verbs_mcast.c, XRC in verbs_xrc.c. */
#define _GNU_SOURCE
#include "xport/verbs_priv.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RC_TIMEOUT 16       /* 4.096 us * 2^16 = 268 ms: patient under emulation */
#define RC_RETRY 7
#define RC_RNR_RETRY 7      /* infinite */
#define RC_MIN_RNR_TIMER 12 /* 0.64 ms */
#define RC_HOP_LIMIT 64
#define RD_ATOMIC_MAX 16

/* ------------------------------------------------------------ helpers -- */

void ibc_xport_verbs_err(const struct vctx *v, const char *call, int err)
{
	ibc_error("verbs %s: %s failed: %s (errno %d)", v->devname[0] ? v->devname : "?", call,
		  strerror(err), err);
}

static int status_of_errno(int err)
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

static unsigned access_flags(unsigned a)
{
	unsigned f = 0;
	if (a & IBC_XPORT_ACCESS_LOCAL_WRITE)
		f |= IBV_ACCESS_LOCAL_WRITE;
	if (a & IBC_XPORT_ACCESS_REMOTE_WRITE)
		f |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (a & IBC_XPORT_ACCESS_REMOTE_READ)
		f |= IBV_ACCESS_REMOTE_READ;
	if (a & IBC_XPORT_ACCESS_REMOTE_ATOMIC)
		f |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	return f;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
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

static int rc_qp_create(struct vctx *v, struct ibv_qp **out)
{
	const struct ibc_xport_params *p = &v->x->params;
	struct ibv_qp_init_attr ia = {
		.send_cq = v->send_cq,
		.recv_cq = v->recv_cq,
		.cap = {
			.max_send_wr = p->sq_depth,
			.max_recv_wr = p->rq_depth,
			.max_send_sge = v->x->caps.max_sge,
			.max_recv_sge = v->x->caps.max_sge,
			.max_inline_data = p->max_inline,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	struct ibv_qp *qp = ibv_create_qp(v->pd, &ia);
	if (!qp && p->max_inline) {
		/* the device may not take that much inline data: ask for none */
		ia.cap.max_inline_data = 0;
		qp = ibv_create_qp(v->pd, &ia);
	}
	if (!qp) {
		int err = errno;
		ibc_xport_verbs_err(v, "ibv_create_qp(RC)", err);
		return status_of_errno(err);
	}
	*out = qp;
	return IBC_OK;
}

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
		return status_of_errno(err);
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
		return status_of_errno(err);
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
		return status_of_errno(err);
	}
	return IBC_OK;
}

/* ------------------------------------------------------ device choice -- */

static int port_active(struct ibv_context *ctx, uint8_t port)
{
	struct ibv_port_attr pa;
	return ibv_query_port(ctx, port, &pa) == 0 && pa.state == IBV_PORT_ACTIVE;
}

/* the first port of ctx that is ACTIVE (or want, if it is); 0 if none */
static uint8_t port_pick(struct ibv_context *ctx, int want)
{
	struct ibv_device_attr da;
	if (ibv_query_device(ctx, &da))
		return 0;
	if (want > 0)
		return want <= da.phys_port_cnt && port_active(ctx, (uint8_t)want) ? (uint8_t)want : 0;
	for (uint8_t pn = 1; pn <= da.phys_port_cnt; pn++)
		if (port_active(ctx, pn))
			return pn;
	return 0;
}

static int verbs_probe(const struct ibc_xport_params *p)
{
	int n = 0, rc = IBC_ERR_NOTFOUND;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return IBC_ERR_NOTFOUND;
	for (int i = 0; i < n && rc != IBC_OK; i++) {
		if (p && p->device && strcmp(ibv_get_device_name(list[i]), p->device) != 0)
			continue;
		struct ibv_context *ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		if (port_pick(ctx, p ? p->port : 0))
			rc = IBC_OK;
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return rc;
}

static int is_ipv4_mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return memcmp(g->raw, pfx, 12) == 0;
}

static int gid_is_zero(const union ibv_gid *g)
{
	static const union ibv_gid zero;
	return memcmp(g, &zero, sizeof(zero)) == 0;
}

static int gid_pick(struct vctx *v)
{
	int want = v->x->params.gid_index;
	int n = v->port_attr.gid_tbl_len, best = -1, best_score = -1;
	for (int i = 0; i < n; i++) {
		struct ibv_gid_entry e;
		if (want >= 0 && i != want)
			continue;
		if (ibv_query_gid_ex(v->ctx, v->port, (uint32_t)i, &e, 0))
			continue; /* an empty slot */
		union ibv_gid g;
		memcpy(&g, &e.gid, sizeof(g));
		if (gid_is_zero(&g))
			continue;
		int score = 1;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			score += 2;
		if (is_ipv4_mapped(&g))
			score += 4;
		if (score > best_score) {
			best = i;
			best_score = score;
			v->gid = g;
			v->roce_v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
		}
	}
	if (best < 0 && want >= 0) {
		/* older kernels: no GID types, read the raw table */
		if (ibv_query_gid(v->ctx, v->port, want, &v->gid) == 0 && !gid_is_zero(&v->gid))
			best = want;
	}
	if (best < 0) {
		if (v->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET || want >= 0) {
			ibc_error("verbs %s: port %u has no usable GID%s%s", v->devname, v->port,
				  want >= 0 ? " at the requested index " : "",
				  want >= 0 ? "(see ibv_devinfo -v)" : "");
			return IBC_ERR_NOTFOUND;
		}
		memset(&v->gid, 0, sizeof(v->gid));
		v->gid_index = 0;
		return IBC_OK;
	}
	v->gid_index = best;
	v->ipv4 = 0;
	if (is_ipv4_mapped(&v->gid))
		memcpy(&v->ipv4, &v->gid.raw[12], 4);
	return IBC_OK;
}

/* the largest inline size the device gives an RC QP (a throw-away probe QP) */
static int inline_probe(struct vctx *v)
{
	struct ibv_qp *qp;
	int rc = rc_qp_create(v, &qp);
	if (rc)
		return rc;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int err = ibv_query_qp(qp, &a, IBV_QP_CAP, &ia);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_query_qp", err);
		rc = status_of_errno(err);
	} else {
		v->x->caps.max_inline = ia.cap.max_inline_data < v->x->params.max_inline
						? ia.cap.max_inline_data
						: v->x->params.max_inline;
	}
	err = ibv_destroy_qp(qp);
	if (err)
		ibc_xport_verbs_err(v, "ibv_destroy_qp", err);
	return rc;
}

/* ----------------------------------------------------------- open/close -- */

static int device_open(struct vctx *v)
{
	const struct ibc_xport_params *p = &v->x->params;
	int n = 0, rc = IBC_ERR_NOTFOUND;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		int err = errno;
		ibc_error("verbs: ibv_get_device_list failed: %s (is the RDMA stack loaded?)",
			  strerror(err));
		return IBC_ERR_NOTFOUND;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);
		if (p->device && strcmp(name, p->device) != 0)
			continue;
		struct ibv_context *ctx = ibv_open_device(list[i]);
		if (!ctx) {
			int err = errno;
			snprintf(v->devname, sizeof(v->devname), "%s", name);
			ibc_xport_verbs_err(v, "ibv_open_device", err);
			rc = status_of_errno(err);
			continue;
		}
		uint8_t pn = port_pick(ctx, p->port);
		if (!pn) {
			ibv_close_device(ctx);
			if (p->device) {
				ibc_error("verbs %s: %s is not ACTIVE", name,
					  p->port ? "the requested port" : "no port");
				rc = IBC_ERR_NOTFOUND;
			}
			continue;
		}
		snprintf(v->devname, sizeof(v->devname), "%s", name);
		v->ctx = ctx;
		v->port = pn;
		rc = IBC_OK;
		break;
	}
	if (rc == IBC_ERR_NOTFOUND && !v->ctx)
		ibc_error("verbs: no RDMA device%s%s with an ACTIVE port (%d device%s found)",
			  p->device ? " named " : "", p->device ? p->device : "", n,
			  n == 1 ? "" : "s");
	ibv_free_device_list(list);
	return rc;
}

static void vctx_free_scratch(struct vctx *v)
{
	free(v->pwr);
	free(v->psge);
	free(v->rwr);
	free(v->rsge);
	free(v->rslots);
	free(v->vqs);
	free(v->peer_vq);
	free(v->connected);
}

static int verbs_open(struct ibc_xport *x)
{
	struct vctx *v = calloc(1, sizeof(*v));
	int rc, err;
	if (!v) {
		ibc_error("verbs: out of memory");
		return IBC_ERR_NOMEM;
	}
	v->x = x;
	v->rfree = -1;
	v->rng = ibc_xport_drop_seed(x);
	v->peer_vq = calloc((size_t)x->size, sizeof(*v->peer_vq));
	v->connected = calloc((size_t)x->size, 1);
	if (!v->peer_vq || !v->connected) {
		ibc_error("verbs: out of memory");
		rc = IBC_ERR_NOMEM;
		goto err_free_v;
	}

	rc = device_open(v);
	if (rc)
		goto err_free_v;
	err = ibv_query_device(v->ctx, &v->dev_attr);
	if (!err)
		err = ibv_query_port(v->ctx, v->port, &v->port_attr);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_query_device/port", err);
		rc = status_of_errno(err);
		goto err_close_device;
	}
	v->use_grh = v->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET || x->params.gid_index >= 0;
	rc = gid_pick(v);
	if (rc)
		goto err_close_device;
	v->max_rd_atomic = (uint32_t)v->dev_attr.max_qp_rd_atom;
	if ((uint32_t)v->dev_attr.max_qp_init_rd_atom < v->max_rd_atomic)
		v->max_rd_atomic = (uint32_t)v->dev_attr.max_qp_init_rd_atom;
	if (v->max_rd_atomic > RD_ATOMIC_MAX)
		v->max_rd_atomic = RD_ATOMIC_MAX;
	if (v->max_rd_atomic < 1)
		v->max_rd_atomic = 1;

	/* caps that do not need a QP */
	struct ibc_xport_caps *c = &x->caps;
	snprintf(c->backend, sizeof(c->backend), "verbs");
	snprintf(c->device, sizeof(c->device), "%.56s:%u", v->devname, v->port);
	c->max_sge = x->params.max_sge;
	if ((int)c->max_sge > v->dev_attr.max_sge - 1) /* one spare for the multicast GRH */
		c->max_sge = (uint32_t)(v->dev_attr.max_sge > 1 ? v->dev_attr.max_sge - 1 : 1);
	if (c->max_sge > IBC_XPORT_MAX_SGE)
		c->max_sge = IBC_XPORT_MAX_SGE;
	if ((int)x->params.sq_depth > v->dev_attr.max_qp_wr ||
	    (int)x->params.rq_depth > v->dev_attr.max_qp_wr ||
	    (int)x->params.cq_depth > v->dev_attr.max_cqe || x->params.sq_depth < 1 ||
	    x->params.rq_depth < 1 || x->params.cq_depth < 1) {
		ibc_error("verbs %s: queue depths sq %u rq %u cq %u exceed the device (max_qp_wr %d, max_cqe %d)",
			  v->devname, x->params.sq_depth, x->params.rq_depth, x->params.cq_depth,
			  v->dev_attr.max_qp_wr, v->dev_attr.max_cqe);
		rc = IBC_ERR_INVAL;
		goto err_close_device;
	}
	c->max_send_wr = x->params.sq_depth;
	c->max_recv_wr = x->params.rq_depth;
	c->cq_depth = x->params.cq_depth;
	c->max_msg = v->port_attr.max_msg_sz;
	c->atomics = v->dev_attr.atomic_cap != IBV_ATOMIC_NONE;
	c->mcast = v->dev_attr.max_mcast_grp > 0 && v->dev_attr.max_mcast_qp_attach > 0 &&
		   (v->ipv4 != 0 || v->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET);
	c->mcast_mtu = c->mcast ? mtu_bytes(v->port_attr.active_mtu) : 0;
	/* rxe loops a group's datagrams back through the IP stack to every
	 * member on the host, the sender's own queue included */
	c->mcast_loopback = c->mcast && strncmp(v->devname, "rxe", 3) == 0;
	c->user_mem = 1;
	c->drop_injection = 1; /* mcast_drop: the receiver discards (p2p_drop: shm only) */
	c->srq = 0;
	c->xrc = 0;

	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_alloc_pd", err);
		rc = status_of_errno(err);
		goto err_close_device;
	}
	v->send_cq = ibv_create_cq(v->ctx, (int)x->params.cq_depth, NULL, NULL, 0);
	if (!v->send_cq) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_create_cq(send)", err);
		rc = status_of_errno(err);
		goto err_dealloc_pd;
	}
	v->recv_cq = ibv_create_cq(v->ctx, (int)x->params.cq_depth, NULL, NULL, 0);
	if (!v->recv_cq) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_create_cq(recv)", err);
		rc = status_of_errno(err);
		goto err_destroy_send_cq;
	}
	long pg = sysconf(_SC_PAGESIZE);
	if (posix_memalign(&v->scratch, (size_t)pg, (size_t)pg)) {
		ibc_error("verbs %s: out of memory", v->devname);
		rc = IBC_ERR_NOMEM;
		goto err_destroy_recv_cq;
	}
	memset(v->scratch, 0, (size_t)pg);
	v->scratch_mr = ibv_reg_mr(v->pd, v->scratch, (size_t)pg, IBV_ACCESS_LOCAL_WRITE);
	if (!v->scratch_mr) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_reg_mr(scratch)", err);
		rc = status_of_errno(err);
		goto err_free_scratch;
	}
	x->priv = v;
	rc = inline_probe(v);
	if (rc)
		goto err_dereg_scratch;
	if (x->params.conn == IBC_XPORT_CONN_XRC) {
		rc = ibc_xport_verbs_xrc_open(v);
		if (rc)
			goto err_dereg_scratch;
		c->xrc = 1;
		c->srq = 1;
	}
	ibc_info("verbs: rank %d on %s port %u (%s, GID index %d%s), inline %u, max_sge %u, mtu %u",
		 x->rank, v->devname, v->port,
		 v->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
		 v->gid_index, v->roce_v2 ? ", RoCE v2" : "", c->max_inline, c->max_sge,
		 mtu_bytes(v->port_attr.active_mtu));
	return IBC_OK;

err_dereg_scratch:
	x->priv = NULL;
	ibv_dereg_mr(v->scratch_mr);
err_free_scratch:
	free(v->scratch);
err_destroy_recv_cq:
	ibv_destroy_cq(v->recv_cq);
err_destroy_send_cq:
	ibv_destroy_cq(v->send_cq);
err_dealloc_pd:
	ibv_dealloc_pd(v->pd);
err_close_device:
	ibv_close_device(v->ctx);
err_free_v:
	vctx_free_scratch(v);
	free(v);
	return rc;
}

static int verbs_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr);

static int verbs_close(struct ibc_xport *x)
{
	struct vctx *v = vctx_of(x);
	int rc = IBC_OK, err;
	if (!v)
		return IBC_OK;
	/* nobody may still be reaching into our memory */
	if (x->size > 1) {
		rc = ibc_boot_barrier(x->boot);
		if (rc)
			ibc_error("verbs %s: close: the bootstrap barrier failed: %s", v->devname,
				  ibc_status_str(rc));
	}
	ibc_xport_verbs_mcast_leave_all(v);
	for (uint32_t i = 0; i < v->nvqs; i++)
		ibc_xport_verbs_vq_destroy(v, v->vqs[i]);
	if (v->xrc)
		ibc_xport_verbs_xrc_close(v);
	while (v->mrs)
		verbs_mr_dereg(x, &v->mrs->pub);
	err = ibv_dereg_mr(v->scratch_mr);
	if (err)
		ibc_xport_verbs_err(v, "ibv_dereg_mr(scratch)", err);
	free(v->scratch);
	err = ibv_destroy_cq(v->recv_cq);
	if (err)
		ibc_xport_verbs_err(v, "ibv_destroy_cq(recv)", err);
	err = ibv_destroy_cq(v->send_cq);
	if (err)
		ibc_xport_verbs_err(v, "ibv_destroy_cq(send)", err);
	err = ibv_dealloc_pd(v->pd);
	if (err)
		ibc_xport_verbs_err(v, "ibv_dealloc_pd", err);
	err = ibv_close_device(v->ctx);
	if (err)
		ibc_xport_verbs_err(v, "ibv_close_device", err);
	if (err && rc == IBC_OK)
		rc = status_of_errno(err);
	vctx_free_scratch(v);
	free(v);
	x->priv = NULL;
	return rc;
}

/* ------------------------------------------------------------- memory -- */

static int mr_register(struct ibc_xport *x, void *addr, size_t len, unsigned access,
		       void *owned, struct ibc_xport_mr **out)
{
	struct vctx *v = vctx_of(x);
	struct vmr *m = calloc(1, sizeof(*m));
	if (!m) {
		ibc_error("verbs %s: out of memory", v->devname);
		return IBC_ERR_NOMEM;
	}
	m->mr = ibv_reg_mr(v->pd, addr, len, (int)access_flags(access));
	if (!m->mr) {
		int err = errno;
		ibc_xport_verbs_err(v, "ibv_reg_mr", err);
		free(m);
		return status_of_errno(err);
	}
	m->owned = owned;
	m->pub.addr = addr;
	m->pub.len = len;
	m->pub.lkey = m->mr->lkey;
	m->pub.rkey = m->mr->rkey;
	m->pub.access = access;
	m->pub.priv = m;
	m->pub.rdesc = (struct ibc_xport_rdesc){
		.addr = (uint64_t)(uintptr_t)addr,
		.len = len,
		.rkey = m->mr->rkey,
		.rank = (uint32_t)x->rank,
	};
	m->next = v->mrs;
	if (v->mrs)
		v->mrs->prev = m;
	v->mrs = m;
	v->st.mrs++;
	v->st.mr_bytes += len;
	*out = &m->pub;
	return IBC_OK;
}

static int verbs_mr_reg(struct ibc_xport *x, void *addr, size_t len, unsigned access,
			struct ibc_xport_mr **out)
{
	return mr_register(x, addr, len, access, NULL, out);
}

static int verbs_mr_alloc(struct ibc_xport *x, size_t len, unsigned access,
			  struct ibc_xport_mr **out)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t rounded = (len + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	void *buf;
	if (posix_memalign(&buf, (size_t)pg, rounded)) {
		ibc_error("verbs %s: out of memory for a %zu-byte region", vctx_of(x)->devname, len);
		return IBC_ERR_NOMEM;
	}
	memset(buf, 0, rounded);
	int rc = mr_register(x, buf, len, access, buf, out);
	if (rc)
		free(buf);
	return rc;
}

static int verbs_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr)
{
	struct vctx *v = vctx_of(x);
	struct vmr *m = mr->priv;
	int rc = IBC_OK;
	int err = ibv_dereg_mr(m->mr);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_dereg_mr", err);
		rc = status_of_errno(err);
	}
	if (m->prev)
		m->prev->next = m->next;
	else
		v->mrs = m->next;
	if (m->next)
		m->next->prev = m->prev;
	v->st.mrs--;
	v->st.mr_bytes -= m->pub.len;
	free(m->owned);
	free(m);
	return rc;
}

/* ------------------------------------------------------------ connect -- */

struct ep_hdr {
	uint32_t lid;
	uint32_t mtu;
	uint8_t gid[16];
};

struct ep_peer {
	uint32_t qpn; /* 0: no QP for that pair */
	uint32_t psn;
};

static size_t ep_len(int size)
{
	return sizeof(struct ep_hdr) + (size_t)size * sizeof(struct ep_peer);
}

static int rc_connect(struct vctx *v, const uint8_t *pairs)
{
	struct ibc_xport *x = v->x;
	size_t el = ep_len(x->size);
	uint8_t *all = NULL, *mine = calloc(1, el);
	int rc = IBC_OK;
	if (!mine)
		goto err_nomem;
	all = malloc(el * (size_t)x->size);
	if (!all)
		goto err_free_mine;

	/* create and INIT a QP for every new pair */
	struct ep_hdr *h = (struct ep_hdr *)mine;
	struct ep_peer *pe = (struct ep_peer *)(mine + sizeof(*h));
	h->lid = v->port_attr.lid;
	h->mtu = v->port_attr.active_mtu;
	memcpy(h->gid, v->gid.raw, 16);
	for (int r = 0; r < x->size && rc == IBC_OK; r++) {
		if (!pairs[r] || v->connected[r])
			continue;
		struct vq *q = v->peer_vq[r];
		if (!q) {
			struct ibv_qp *qp;
			rc = rc_qp_create(v, &qp);
			if (rc)
				break;
			rc = ibc_xport_verbs_vq_add(v, qp, VQ_RC, r, &q);
			if (rc) {
				ibv_destroy_qp(qp);
				break;
			}
			v->peer_vq[r] = q;
			q->psn = ibc_xport_verbs_psn_make(v, (uint32_t)r);
			rc = ibc_xport_verbs_qp_init(v, qp,
						     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
							     IBV_ACCESS_REMOTE_ATOMIC |
							     IBV_ACCESS_LOCAL_WRITE);
			if (rc)
				break;
		}
		pe[r].qpn = q->qp->qp_num;
		pe[r].psn = q->psn;
	}
	/* the allgather is collective: go through it even after a local failure,
	 * with no QPs offered, so the peers do not hang */
	int rc_ag = ibc_boot_allgather(x->boot, mine, all, el);
	if (rc_ag) {
		ibc_error("verbs %s: endpoint exchange failed: %s", v->devname, ibc_status_str(rc_ag));
		rc = rc ? rc : rc_ag;
		goto out_free_all;
	}
	for (int r = 0; r < x->size && rc == IBC_OK; r++) {
		if (!pairs[r] || v->connected[r])
			continue;
		const struct ep_hdr *rh = (const struct ep_hdr *)(all + (size_t)r * el);
		const struct ep_peer *rp =
			(const struct ep_peer *)(all + (size_t)r * el + sizeof(*rh)) + x->rank;
		struct vq *q = v->peer_vq[r];
		if (rp->qpn == 0) {
			ibc_error("verbs %s: rank %d offered no queue pair to rank %d", v->devname, r,
				  x->rank);
			rc = IBC_ERR_REMOTE;
			break;
		}
		union ibv_gid dgid;
		memcpy(dgid.raw, rh->gid, 16);
		enum ibv_mtu mtu = v->port_attr.active_mtu;
		if (rh->mtu < (uint32_t)mtu)
			mtu = (enum ibv_mtu)rh->mtu;
		rc = ibc_xport_verbs_qp_rtr(v, q->qp, rp->qpn, rp->psn, &dgid, (uint16_t)rh->lid,
					    mtu, 1);
		if (rc)
			break;
		q->rtr = 1;
		rc = ibc_xport_verbs_qp_rts(v, q->qp, q->psn, 1);
		if (rc)
			break;
		q->rts = 1;
		v->connected[r] = 1;
	}
out_free_all:
	free(all);
	free(mine);
	return rc;

err_free_mine:
	free(mine);
err_nomem:
	ibc_error("verbs %s: out of memory for the endpoint exchange", v->devname);
	return IBC_ERR_NOMEM;
}

static int verbs_connect(struct ibc_xport *x, const uint8_t *want)
{
	struct vctx *v = vctx_of(x);
	size_t n = (size_t)x->size;
	uint8_t *mine = calloc(n, 1), *all = calloc(n, n), *pairs = calloc(n, 1);
	int rc;
	if (!mine || !all || !pairs) {
		free(mine);
		free(all);
		free(pairs);
		ibc_error("verbs %s: out of memory", v->devname);
		return IBC_ERR_NOMEM;
	}
	for (size_t r = 0; r < n; r++)
		mine[r] = want ? want[r] != 0 : 1;
	rc = ibc_boot_allgather(x->boot, mine, all, n);
	if (rc) {
		ibc_error("verbs %s: connect: exchange of the wanted peers failed: %s", v->devname,
			  ibc_status_str(rc));
		goto out_free;
	}
	for (size_t r = 0; r < n; r++)
		pairs[r] = all[(size_t)x->rank * n + r] || all[r * n + (size_t)x->rank];
	if (v->xrc)
		rc = ibc_xport_verbs_xrc_connect(v, pairs);
	else
		rc = rc_connect(v, pairs);
	/* every side is in RTR before anybody sends */
	int rc_bar = ibc_boot_barrier(x->boot);
	if (rc_bar && rc == IBC_OK) {
		ibc_error("verbs %s: connect: barrier failed: %s", v->devname, ibc_status_str(rc_bar));
		rc = rc_bar;
	}
out_free:
	free(mine);
	free(all);
	free(pairs);
	return rc;
}

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
	return status_of_errno(err);
}

static int verbs_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted)
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

static int verbs_recv_post(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
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
			return status_of_errno(err);
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

static int verbs_cq_poll(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n)
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

static int verbs_progress(struct ibc_xport *x)
{
	(void)x; /* RDMA needs no help from the CPU */
	return IBC_OK;
}

static int verbs_stats_get(struct ibc_xport *x, struct ibc_xport_stats *out)
{
	*out = vctx_of(x)->st;
	return IBC_OK;
}

const struct ibc_xport_ops ibc_xport_verbs_ops = {
	.name = "verbs",
	.probe = verbs_probe,
	.open = verbs_open,
	.close = verbs_close,
	.connect = verbs_connect,
	.mr_reg = verbs_mr_reg,
	.mr_alloc = verbs_mr_alloc,
	.mr_dereg = verbs_mr_dereg,
	.post = verbs_post,
	.recv_post = verbs_recv_post,
	.cq_poll = verbs_cq_poll,
	.progress = verbs_progress,
	.mcast_join = ibc_xport_verbs_mcast_join,
	.mcast_leave = ibc_xport_verbs_mcast_leave,
	.stats_get = verbs_stats_get,
};
