/* verbs backend: XRC connections (the channel paper's RC-vs-XRC comparison,
 * Sridhar's thesis ch. 4).
 *
 * Every process of a node opens the same XRC domain (a file named by a token
 * rank 0 hands out during connect, plus the node id) and creates one XRC SRQ
 * in it, on which all its two-sided receives land.  A process keeps one XRC
 * initiator QP per remote node; every process of that node is reached
 * through it by naming the target process's SRQ number in the WR.  On the
 * target node the node leader (local rank 0) creates one XRC target QP per
 * incoming initiator QP in the shared domain, so it delivers to any SRQ of
 * the node.  Connections: n_nodes per process instead of n_procs.
 *
 * Devices without XRC (rxe among them) fail ibv_open_xrcd at open: the
 * device's reason is logged and open returns IBC_ERR_UNSUPPORTED. */
#define _GNU_SOURCE
#include "xport/verbs_priv.h"
#include "xport/xrc_plan.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct vxrc {
	struct ibv_xrcd *xrcd;
	int xrcd_fd;
	char path[128];
	struct ibv_srq *srq;
	uint32_t srqn;
	int nnodes;
	int *node_of;           /* rank -> node id */
	uint32_t *srqn_of;      /* rank -> SRQ number */
	struct vq **ini;        /* node -> initiator queue */
	struct ibv_qp **tgt;    /* rank -> target QP made for it (node leader only) */
	uint32_t *tgt_qpn;      /* rank -> that QP's number (for peer lookup) */
};

struct xrc_rec1 {           /* per rank, round 1 */
	uint32_t lid, mtu, srqn, node;
	uint8_t gid[16];
	/* then ini_qpn[nnodes_max], ini_psn[nnodes_max] */
};

int ibc_xport_verbs_xrc_open(struct vctx *v)
{
	/* probe: a private domain tells whether the device has XRC at all */
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *probe = ibv_open_xrcd(v->ctx, &a);
	if (!probe) {
		int err = errno;
		ibc_xport_unsupported_set("%s: ibv_open_xrcd: %s (errno %d)", v->devname,
					  strerror(err), err);
		ibc_warn("verbs %s: XRC is not available: %s", v->devname,
			 ibc_xport_unsupported_reason());
		return IBC_ERR_UNSUPPORTED;
	}
	ibv_close_xrcd(probe);
	struct vxrc *c = calloc(1, sizeof(*c));
	int n = v->x->size;
	if (c) {
		c->xrcd_fd = -1;
		c->node_of = calloc((size_t)n, sizeof(int));
		c->srqn_of = calloc((size_t)n, sizeof(uint32_t));
		c->ini = calloc((size_t)n, sizeof(struct vq *));
		c->tgt = calloc((size_t)n, sizeof(struct ibv_qp *));
		c->tgt_qpn = calloc((size_t)n, sizeof(uint32_t));
	}
	if (!c || !c->node_of || !c->srqn_of || !c->ini || !c->tgt || !c->tgt_qpn) {
		if (c) {
			free(c->node_of);
			free(c->srqn_of);
			free(c->ini);
			free(c->tgt);
			free(c->tgt_qpn);
		}
		free(c);
		ibc_error("verbs %s: out of memory", v->devname);
		return IBC_ERR_NOMEM;
	}
	v->xrc = c;
	return IBC_OK;
}

void ibc_xport_verbs_xrc_close(struct vctx *v)
{
	struct vxrc *c = v->xrc;
	int err;
	if (!c)
		return;
	/* initiator queues are in v->vqs and were destroyed with them */
	for (int r = 0; r < v->x->size; r++) {
		if (c->tgt[r]) {
			err = ibv_destroy_qp(c->tgt[r]);
			if (err)
				ibc_xport_verbs_err(v, "ibv_destroy_qp(XRC target)", err);
		}
	}
	if (c->srq) {
		err = ibv_destroy_srq(c->srq);
		if (err)
			ibc_xport_verbs_err(v, "ibv_destroy_srq(XRC)", err);
	}
	if (c->xrcd) {
		err = ibv_close_xrcd(c->xrcd);
		if (err)
			ibc_xport_verbs_err(v, "ibv_close_xrcd", err);
	}
	if (c->xrcd_fd >= 0)
		close(c->xrcd_fd);
	if (c->path[0])
		unlink(c->path); /* the domain lives on in the open descriptors */
	free(c->node_of);
	free(c->srqn_of);
	free(c->ini);
	free(c->tgt);
	free(c->tgt_qpn);
	free(c);
	v->xrc = NULL;
}

struct ibv_srq *ibc_xport_verbs_xrc_srq(struct vctx *v)
{
	return v->xrc ? v->xrc->srq : NULL;
}

int ibc_xport_verbs_xrc_route(struct vctx *v, int peer, struct vq **q, uint32_t *srqn)
{
	struct vxrc *c = v->xrc;
	struct vq *ini = c->ini[c->node_of[peer]];
	if (!ini) {
		ibc_error("verbs %s: no XRC connection to the node of rank %d", v->devname, peer);
		return IBC_ERR_INVAL;
	}
	*q = ini;
	*srqn = c->srqn_of[peer];
	return IBC_OK;
}

int ibc_xport_verbs_xrc_peer_of_qpn(struct vctx *v, uint32_t src_qp)
{
	struct vxrc *c = v->xrc;
	for (int r = 0; r < v->x->size; r++)
		if (c->tgt_qpn[r] == src_qp && src_qp)
			return r;
	return -1;
}

/* the shared domain and this process's SRQ (first connect only) */
static int domain_open(struct vctx *v)
{
	struct vxrc *c = v->xrc;
	struct ibc_xport *x = v->x;
	if (c->xrcd)
		return IBC_OK;
	uint64_t token = 0;
	if (x->rank == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		token = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec;
	}
	int rc = ibc_boot_bcast(x->boot, &token, sizeof(token), 0);
	if (rc) {
		ibc_error("verbs %s: XRC: broadcast of the domain name failed: %s", v->devname,
			  ibc_status_str(rc));
		return rc;
	}
	snprintf(c->path, sizeof(c->path), "/dev/shm/ibchar-xrcd-%016llx-%d",
		 (unsigned long long)token, x->boot->node_id);
	c->xrcd_fd = open(c->path, O_RDONLY | O_CREAT | O_CLOEXEC, S_IRUSR | S_IWUSR);
	if (c->xrcd_fd < 0) {
		ibc_error("verbs %s: XRC: open %s: %s", v->devname, c->path, strerror(errno));
		c->path[0] = '\0';
		return IBC_ERR_SYS;
	}
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = c->xrcd_fd,
		.oflags = O_CREAT,
	};
	c->xrcd = ibv_open_xrcd(v->ctx, &a);
	if (!c->xrcd) {
		ibc_xport_verbs_err(v, "ibv_open_xrcd(shared)", errno);
		return IBC_ERR_SYS;
	}
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = x->params.rq_depth, .max_sge = x->caps.max_sge },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.pd = v->pd,
		.xrcd = c->xrcd,
		.cq = v->recv_cq,
	};
	c->srq = ibv_create_srq_ex(v->ctx, &sa);
	if (!c->srq) {
		ibc_xport_verbs_err(v, "ibv_create_srq_ex(XRC)", errno);
		return IBC_ERR_SYS;
	}
	int err = ibv_get_srq_num(c->srq, &c->srqn);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_get_srq_num", err);
		return IBC_ERR_SYS;
	}
	v->st.srqs++;
	return IBC_OK;
}

static int ini_make(struct vctx *v, int node)
{
	struct vxrc *c = v->xrc;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = v->send_cq,
		.cap = {
			.max_send_wr = v->x->params.sq_depth,
			.max_send_sge = v->x->caps.max_sge,
			.max_inline_data = v->x->caps.max_inline,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = v->pd,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(v->ctx, &ia);
	if (!qp) {
		ibc_xport_verbs_err(v, "ibv_create_qp_ex(XRC_SEND)", errno);
		return IBC_ERR_SYS;
	}
	struct vq *q;
	int rc = ibc_xport_verbs_vq_add(v, qp, VQ_XRC_INI, -1, &q);
	if (rc) {
		ibv_destroy_qp(qp);
		return rc;
	}
	q->node = node;
	q->psn = ibc_xport_verbs_psn_make(v, 0x10000u + (uint32_t)node);
	c->ini[node] = q;
	return ibc_xport_verbs_qp_init(v, qp, 0);
}

static int tgt_make(struct vctx *v, int r, uint32_t ini_qpn, uint32_t ini_psn,
		    const union ibv_gid *gid, uint16_t lid, enum ibv_mtu mtu, uint32_t *psn)
{
	struct vxrc *c = v->xrc;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = c->xrcd,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(v->ctx, &ia);
	if (!qp) {
		ibc_xport_verbs_err(v, "ibv_create_qp_ex(XRC_RECV)", errno);
		return IBC_ERR_SYS;
	}
	c->tgt[r] = qp;
	c->tgt_qpn[r] = qp->qp_num;
	v->st.qps++;
	*psn = ibc_xport_verbs_psn_make(v, 0x20000u + (uint32_t)r);
	int rc = ibc_xport_verbs_qp_init(v, qp,
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE);
	if (rc == IBC_OK)
		rc = ibc_xport_verbs_qp_rtr(v, qp, ini_qpn, ini_psn, gid, lid, mtu, 1);
	if (rc == IBC_OK)
		rc = ibc_xport_verbs_qp_rts(v, qp, *psn, 0);
	return rc;
}

int ibc_xport_verbs_xrc_connect(struct vctx *v, const uint8_t *pairs)
{
	struct ibc_xport *x = v->x;
	struct vxrc *c = v->xrc;
	struct ibc_xrc_plan plan = { 0 };
	int n = x->size, rc;
	rc = domain_open(v);
	/* the node count bounds the per-node arrays; with no node info use n */
	int nn = n;
	size_t l1 = sizeof(struct xrc_rec1) + (size_t)nn * 2 * sizeof(uint32_t);
	size_t l2 = (size_t)n * 2 * sizeof(uint32_t);
	uint8_t *r1 = calloc(1, l1), *all1 = malloc(l1 * (size_t)n);
	uint32_t *r2 = calloc(1, l2), *all2 = malloc(l2 * (size_t)n);
	if (!r1 || !all1 || !r2 || !all2) {
		ibc_error("verbs %s: out of memory for the XRC exchange", v->devname);
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	/* round 1: node ids, SRQ numbers, the initiator QPs we offer each node.
	 * A local failure still takes part (offering nothing) so nobody hangs. */
	struct xrc_rec1 *h = (struct xrc_rec1 *)r1;
	uint32_t *ini_qpn = (uint32_t *)(r1 + sizeof(*h)), *ini_psn = ini_qpn + nn;
	h->lid = v->port_attr.lid;
	h->mtu = v->port_attr.active_mtu;
	h->srqn = c->srqn;
	h->node = (uint32_t)x->boot->node_id;
	memcpy(h->gid, v->gid.raw, 16);
	int rc1 = ibc_boot_allgather(x->boot, r1, all1, l1);
	if (rc1) {
		rc = rc ? rc : rc1;
		goto out_free;
	}
	/* the plan (xrc_plan.c, unit-tested without a device): nodes, leaders,
	 * the initiators this process needs */
	{
		int *ids = malloc((size_t)n * sizeof(int));
		uint32_t *srqns = malloc((size_t)n * sizeof(uint32_t));
		int prc = ids && srqns ? IBC_OK : IBC_ERR_NOMEM;

		for (int r = 0; prc == IBC_OK && r < n; r++) {
			const struct xrc_rec1 *o = (const struct xrc_rec1 *)(all1 + (size_t)r * l1);
			ids[r] = (int)o->node;
			srqns[r] = o->srqn;
		}
		if (prc == IBC_OK)
			prc = ibc_xrc_plan_build(&plan, n, x->rank, ids, srqns, pairs);
		free(ids);
		free(srqns);
		if (prc != IBC_OK) {
			ibc_error("verbs %s: XRC: the ranks' node ids do not make a plan", v->devname);
			rc = rc ? rc : prc;
			goto out_free;
		}
	}
	c->nnodes = plan.nnodes;
	memcpy(c->node_of, plan.node_of, (size_t)n * sizeof(int));
	memcpy(c->srqn_of, plan.srqn_of, (size_t)n * sizeof(uint32_t));
	for (int node = 0; node < plan.nnodes && rc == IBC_OK; node++)
		if (plan.need_ini[node] && !c->ini[node])
			rc = ini_make(v, node);
	for (int node = 0; node < c->nnodes; node++) {
		if (rc == IBC_OK && c->ini[node] && !c->ini[node]->rts) {
			ini_qpn[node] = c->ini[node]->qp->qp_num;
			ini_psn[node] = c->ini[node]->psn;
		}
	}
	/* round 1b: the initiator QPs (sent again now that the node count is known) */
	rc1 = ibc_boot_allgather(x->boot, r1, all1, l1);
	if (rc1) {
		rc = rc ? rc : rc1;
		goto out_free;
	}
	/* round 2: the node leader makes a target QP for every initiator aimed here */
	int me_node = x->boot->node_id;
	if (x->boot->local_rank == 0) {
		for (int r = 0; r < n && rc == IBC_OK; r++) {
			const struct xrc_rec1 *o = (const struct xrc_rec1 *)(all1 + (size_t)r * l1);
			const uint32_t *oq = (const uint32_t *)((const uint8_t *)o + sizeof(*o));
			if (!oq[me_node] || c->tgt[r])
				continue;
			union ibv_gid g;
			memcpy(g.raw, o->gid, 16);
			enum ibv_mtu mtu = v->port_attr.active_mtu;
			if (o->mtu < (uint32_t)mtu)
				mtu = (enum ibv_mtu)o->mtu;
			uint32_t psn = 0;
			rc = tgt_make(v, r, oq[me_node], oq[nn + me_node], &g, (uint16_t)o->lid, mtu,
				      &psn);
			r2[2 * r] = c->tgt_qpn[r];
			r2[2 * r + 1] = psn;
		}
	}
	int rc2 = ibc_boot_allgather(x->boot, r2, all2, l2);
	if (rc2) {
		rc = rc ? rc : rc2;
		goto out_free;
	}
	/* connect our initiators to the targets the leaders made for us */
	for (int node = 0; node < c->nnodes && rc == IBC_OK; node++) {
		struct vq *q = c->ini[node];
		if (!q || q->rts)
			continue;
		int leader = plan.leader_of[node]; /* the lowest rank: its local rank 0 */
		const uint32_t *lt = all2 + (size_t)leader * 2 * n;
		uint32_t tq = lt[2 * x->rank], tp = lt[2 * x->rank + 1];
		const struct xrc_rec1 *o = (const struct xrc_rec1 *)(all1 + (size_t)leader * l1);
		if (!tq) {
			ibc_error("verbs %s: XRC: node %d made no target for rank %d", v->devname, node,
				  x->rank);
			rc = IBC_ERR_REMOTE;
			break;
		}
		union ibv_gid g;
		memcpy(g.raw, o->gid, 16);
		enum ibv_mtu mtu = v->port_attr.active_mtu;
		if (o->mtu < (uint32_t)mtu)
			mtu = (enum ibv_mtu)o->mtu;
		rc = ibc_xport_verbs_qp_rtr(v, q->qp, tq, tp, &g, (uint16_t)o->lid, mtu, 0);
		if (rc == IBC_OK)
			rc = ibc_xport_verbs_qp_rts(v, q->qp, q->psn, 1);
		if (rc == IBC_OK)
			q->rtr = q->rts = 1;
	}
	for (int r = 0; r < n && rc == IBC_OK; r++)
		if (pairs[r] && c->ini[c->node_of[r]] && c->ini[c->node_of[r]]->rts)
			v->connected[r] = 1;
	/* every rank's target-side QPs of this node were made by the leader;
	 * their numbers identify senders of receives */
	for (int r = 0; r < n; r++) {
		int leader = me_node < plan.nnodes ? plan.leader_of[me_node] : -1;
		if (leader >= 0 && !c->tgt_qpn[r])
			c->tgt_qpn[r] = all2[(size_t)leader * 2 * n + 2 * r];
	}
out_free:
	ibc_xrc_plan_free(&plan);
	free(r1);
	free(all1);
	free(r2);
	free(all2);
	return rc;
}
