/* verbs backend: UD multicast through librdmacm.
 *
 * One UD QP per joined group (the group's own receive queue), in our PD so
 * the caller's registered buffers serve as receive and send buffers.  The
 * group is an IPv4 multicast address derived from the group id
 * (239.x.y.z); librdmacm resolves it from our GID's IPv4 address (which
 * binds the id to our device, no multicast route needed) and joins; the
 * join event's UD parameters give the address handle, the remote QPN and
 * Q_Key; we attach our QP to the group's MGID ourselves (librdmacm would do
 * it only for a QP it created on its own device context).
 *
 * Receives carry a 40-byte GRH first: a private scatter entry swallows it
 * (xport_verbs.c), so the caller sees the payload only. */
#define _GNU_SOURCE
#include "xport/verbs_priv.h"

#include "core/log.h"
#include "core/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CM_TIMEOUT_MS 5000

struct vgroup {
	struct ibc_xport_mcast pub;
	struct vctx *v;
	struct vq *vq;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_ah *ah;
	uint32_t remote_qpn, qkey;
	union ibv_gid mgid;
	uint16_t mlid;
	int attached, joined;
	struct sockaddr_in maddr;
	struct vgroup *prev, *next;
};

struct vq *ibc_xport_verbs_mcast_vq(struct ibc_xport_mcast *g)
{
	return ((struct vgroup *)g->priv)->vq;
}

void ibc_xport_verbs_mcast_ud(struct ibc_xport_mcast *g, struct ibv_send_wr *wr)
{
	struct vgroup *vg = g->priv;
	wr->wr.ud.ah = vg->ah;
	wr->wr.ud.remote_qpn = vg->remote_qpn;
	wr->wr.ud.remote_qkey = vg->qkey;
}

/* waits for the next event on ch; it must be `want` */
static int cm_event_wait(struct vctx *v, struct rdma_event_channel *ch,
			 enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int n;
	do {
		n = poll(&pfd, 1, CM_TIMEOUT_MS);
	} while (n < 0 && errno == EINTR);
	if (n == 0) {
		ibc_error("verbs %s: no %s event from the RDMA CM within %d ms", v->devname,
			  rdma_event_str(want), CM_TIMEOUT_MS);
		return IBC_ERR_TIMEOUT;
	}
	if (n < 0) {
		ibc_xport_verbs_err(v, "poll(rdma_cm channel)", errno);
		return IBC_ERR_SYS;
	}
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev)) {
		ibc_xport_verbs_err(v, "rdma_get_cm_event", errno);
		return IBC_ERR_SYS;
	}
	if (ev->event != want) {
		ibc_error("verbs %s: RDMA CM: expected %s, got %s (status %d: %s)", v->devname,
			  rdma_event_str(want), rdma_event_str(ev->event), ev->status,
			  strerror(ev->status < 0 ? -ev->status : ev->status));
		rdma_ack_cm_event(ev);
		return ev->status == -ENODEV || ev->status == -EOPNOTSUPP ? IBC_ERR_UNSUPPORTED
									  : IBC_ERR_REMOTE;
	}
	*out = ev;
	return IBC_OK;
}

static int ud_qp_make(struct vctx *v, struct vq **out)
{
	const struct ibc_xport_params *p = &v->x->params;
	struct ibv_qp_init_attr ia = {
		.send_cq = v->send_cq,
		.recv_cq = v->recv_cq,
		.cap = {
			.max_send_wr = p->sq_depth,
			.max_recv_wr = p->rq_depth,
			.max_send_sge = v->x->caps.max_sge,
			.max_recv_sge = v->x->caps.max_sge + 1,
			.max_inline_data = v->x->caps.max_inline,
		},
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp *qp = ibv_create_qp(v->pd, &ia);
	if (!qp) {
		int err = errno;
		ibc_xport_verbs_err(v, "ibv_create_qp(UD)", err);
		return err == ENOMEM ? IBC_ERR_NOMEM : IBC_ERR_SYS;
	}
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = v->port,
		.qkey = RDMA_UDP_QKEY,
	};
	int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	const char *call = "ibv_modify_qp(UD INIT)";
	if (!err) {
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		call = "ibv_modify_qp(UD RTR)";
	}
	if (!err) {
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
					  .sq_psn = ibc_xport_verbs_psn_make(v, 0x5544) };
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		call = "ibv_modify_qp(UD RTS)";
	}
	if (err) {
		ibc_xport_verbs_err(v, call, err);
		ibv_destroy_qp(qp);
		return IBC_ERR_SYS;
	}
	int rc = ibc_xport_verbs_vq_add(v, qp, VQ_MCAST, -1, out);
	if (rc)
		ibv_destroy_qp(qp);
	return rc;
}

static void group_unlink(struct vctx *v, struct vgroup *g)
{
	if (g->prev)
		g->prev->next = g->next;
	else if (v->groups == g)
		v->groups = g->next;
	if (g->next)
		g->next->prev = g->prev;
	g->prev = g->next = NULL;
}

int ibc_xport_verbs_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			       struct ibc_xport_mcast **out)
{
	struct vctx *v = vctx_of(x);
	int rc, err;
	if (!x->caps.mcast) {
		ibc_xport_unsupported_set("%s: multicast needs a RoCE GID with an IPv4 address or an InfiniBand port",
					  v->devname);
		ibc_warn("verbs: %s", ibc_xport_unsupported_reason());
		return IBC_ERR_UNSUPPORTED;
	}
	struct vgroup *g = calloc(1, sizeof(*g));
	if (!g) {
		ibc_error("verbs %s: out of memory", v->devname);
		return IBC_ERR_NOMEM;
	}
	g->v = v;
	g->pub.id = name ? ibc_xport_mcast_id_from_name(name) : id;
	g->pub.mtu = x->caps.mcast_mtu;
	snprintf(g->pub.name, sizeof(g->pub.name), "%s", name ? name : "");
	g->pub.priv = g;
	uint32_t h = g->pub.id ^ (g->pub.id >> 24);
	g->maddr.sin_family = AF_INET;
	g->maddr.sin_addr.s_addr = htonl(0xef000000u | (h & 0xffffffu)); /* 239.x.y.z */

	rc = ud_qp_make(v, &g->vq);
	if (rc)
		goto err_free_g;
	g->vq->group = &g->pub;

	g->ch = rdma_create_event_channel();
	if (!g->ch) {
		err = errno;
		ibc_xport_verbs_err(v, "rdma_create_event_channel", err);
		rc = err == ENODEV || err == ENOENT ? IBC_ERR_UNSUPPORTED : IBC_ERR_SYS;
		goto err_destroy_qp;
	}
	if (rdma_create_id(g->ch, &g->id, g, RDMA_PS_UDP)) {
		ibc_xport_verbs_err(v, "rdma_create_id", errno);
		rc = IBC_ERR_SYS;
		goto err_destroy_channel;
	}
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr.s_addr = v->ipv4 };
	if (rdma_resolve_addr(g->id, v->ipv4 ? (struct sockaddr *)&src : NULL,
			      (struct sockaddr *)&g->maddr, CM_TIMEOUT_MS)) {
		ibc_xport_verbs_err(v, "rdma_resolve_addr", errno);
		rc = IBC_ERR_SYS;
		goto err_destroy_id;
	}
	struct rdma_cm_event *ev;
	rc = cm_event_wait(v, g->ch, RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
	if (rc)
		goto err_destroy_id;
	rdma_ack_cm_event(ev);
	if (!g->id->verbs || strcmp(ibv_get_device_name(g->id->verbs->device), v->devname) != 0) {
		ibc_error("verbs %s: the RDMA CM bound the multicast group to device %s",
			  v->devname, g->id->verbs ? ibv_get_device_name(g->id->verbs->device) : "none");
		rc = IBC_ERR_UNSUPPORTED;
		goto err_destroy_id;
	}
	if (rdma_join_multicast(g->id, (struct sockaddr *)&g->maddr, g)) {
		ibc_xport_verbs_err(v, "rdma_join_multicast", errno);
		rc = IBC_ERR_SYS;
		goto err_destroy_id;
	}
	g->joined = 1;
	rc = cm_event_wait(v, g->ch, RDMA_CM_EVENT_MULTICAST_JOIN, &ev);
	if (rc)
		goto err_leave;
	struct ibv_ah_attr ah_attr = ev->param.ud.ah_attr;
	g->remote_qpn = ev->param.ud.qp_num;
	g->qkey = ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	ah_attr.port_num = v->port;
	g->mgid = ah_attr.grh.dgid;
	g->mlid = ah_attr.dlid;
	g->ah = ibv_create_ah(v->pd, &ah_attr);
	if (!g->ah) {
		ibc_xport_verbs_err(v, "ibv_create_ah(multicast)", errno);
		rc = IBC_ERR_SYS;
		goto err_leave;
	}
	if (g->qkey != RDMA_UDP_QKEY) {
		struct ibv_qp_attr a = { .qkey = g->qkey };
		err = ibv_modify_qp(g->vq->qp, &a, IBV_QP_QKEY);
		if (err) {
			ibc_xport_verbs_err(v, "ibv_modify_qp(Q_Key)", err);
			rc = IBC_ERR_SYS;
			goto err_destroy_ah;
		}
	}
	err = ibv_attach_mcast(g->vq->qp, &g->mgid, g->mlid);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_attach_mcast", err);
		rc = IBC_ERR_SYS;
		goto err_destroy_ah;
	}
	g->attached = 1;
	g->next = v->groups;
	if (v->groups)
		v->groups->prev = g;
	v->groups = g;
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &g->maddr.sin_addr, ip, sizeof(ip));
	ibc_debug("verbs %s: joined multicast group %#x (%s) as UD QP %u", v->devname, g->pub.id,
		  ip, g->vq->qp->qp_num);
	*out = &g->pub;
	return IBC_OK;

err_destroy_ah:
	ibv_destroy_ah(g->ah);
err_leave:
	rdma_leave_multicast(g->id, (struct sockaddr *)&g->maddr);
err_destroy_id:
	rdma_destroy_id(g->id);
err_destroy_channel:
	rdma_destroy_event_channel(g->ch);
err_destroy_qp:
	ibc_xport_verbs_vq_destroy(v, g->vq);
err_free_g:
	free(g);
	return rc;
}

int ibc_xport_verbs_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *pub)
{
	struct vctx *v = vctx_of(x);
	struct vgroup *g = pub->priv;
	int rc = IBC_OK, err;
	group_unlink(v, g);
	if (g->attached) {
		err = ibv_detach_mcast(g->vq->qp, &g->mgid, g->mlid);
		if (err) {
			ibc_xport_verbs_err(v, "ibv_detach_mcast", err);
			rc = IBC_ERR_SYS;
		}
	}
	if (rdma_leave_multicast(g->id, (struct sockaddr *)&g->maddr)) {
		ibc_xport_verbs_err(v, "rdma_leave_multicast", errno);
		rc = IBC_ERR_SYS;
	}
	err = ibv_destroy_ah(g->ah);
	if (err) {
		ibc_xport_verbs_err(v, "ibv_destroy_ah", err);
		rc = IBC_ERR_SYS;
	}
	if (rdma_destroy_id(g->id)) {
		ibc_xport_verbs_err(v, "rdma_destroy_id", errno);
		rc = IBC_ERR_SYS;
	}
	rdma_destroy_event_channel(g->ch);
	ibc_xport_verbs_vq_destroy(v, g->vq);
	free(g);
	return rc;
}

void ibc_xport_verbs_mcast_leave_all(struct vctx *v)
{
	while (v->groups)
		ibc_xport_verbs_mcast_leave(v->x, &v->groups->pub);
}
