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
 * This file: device, queues, open / close, memory, connections (errors, the
 * queue table and QP transitions are in verbs_qp.c); posting and
 * completions are in verbs_post.c, multicast (UD + librdmacm) in
 * verbs_mcast.c, XRC in verbs_xrc.c. */
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

#define RD_ATOMIC_MAX 16

/* ------------------------------------------------------------ helpers -- */

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
		return ibc_xport_verbs_status_of_errno(err);
	}
	*out = qp;
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
		rc = ibc_xport_verbs_status_of_errno(err);
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
			rc = ibc_xport_verbs_status_of_errno(err);
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
		rc = ibc_xport_verbs_status_of_errno(err);
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
	/* rxe needs the kernel; a hardware HCA would not, but none was measured */
	c->write_needs_cpu = 1;
	c->srq = 0;
	c->xrc = 0;

	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_alloc_pd", err);
		rc = ibc_xport_verbs_status_of_errno(err);
		goto err_close_device;
	}
	v->send_cq = ibv_create_cq(v->ctx, (int)x->params.cq_depth, NULL, NULL, 0);
	if (!v->send_cq) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_create_cq(send)", err);
		rc = ibc_xport_verbs_status_of_errno(err);
		goto err_dealloc_pd;
	}
	v->recv_cq = ibv_create_cq(v->ctx, (int)x->params.cq_depth, NULL, NULL, 0);
	if (!v->recv_cq) {
		err = errno;
		ibc_xport_verbs_err(v, "ibv_create_cq(recv)", err);
		rc = ibc_xport_verbs_status_of_errno(err);
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
		rc = ibc_xport_verbs_status_of_errno(err);
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
		rc = ibc_xport_verbs_status_of_errno(err);
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
		return ibc_xport_verbs_status_of_errno(err);
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
		rc = ibc_xport_verbs_status_of_errno(err);
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
	.post = ibc_xport_verbs_post,
	.recv_post = ibc_xport_verbs_recv_post,
	.cq_poll = ibc_xport_verbs_cq_poll,
	.progress = verbs_progress,
	.mcast_join = ibc_xport_verbs_mcast_join,
	.mcast_leave = ibc_xport_verbs_mcast_leave,
	.stats_get = verbs_stats_get,
};
