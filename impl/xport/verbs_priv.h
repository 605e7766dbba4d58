/* Private state of the verbs backend, shared by xport_verbs.c (device, memory,
 * RC connections), verbs_post.c (posting, completions), verbs_mcast.c (UD
 * multicast through librdmacm) and verbs_xrc.c (XRC domain, SRQ, shared
 * initiator QPs).
 * Not part of the transport interface: only impl/xport/verbs_*.c include it. */
#ifndef IBC_XPORT_VERBS_PRIV_H
#define IBC_XPORT_VERBS_PRIV_H

#include "xport/xport.h"

#include <infiniband/verbs.h>
#include <stdint.h>

/* ibv wr_id of a send-side WR: queue index in the high bits, the low bits of
 * the WR's sequence number in that queue's ring */
#define VQ_SEQ_BITS 40
#define VQ_SEQ_MASK ((UINT64_C(1) << VQ_SEQ_BITS) - 1)
#define VERBS_GRH_BYTES 40

enum vq_kind {
	VQ_RC = 0,       /* RC QP to one peer */
	VQ_MCAST = 1,    /* UD QP of one multicast group */
	VQ_XRC_INI = 2   /* XRC initiator QP to one remote node (its processes share it) */
};

/* one posted send-side WR, kept until a completion at or after it */
struct vq_slot {
	uint64_t wr_id;
	uint32_t len;
	uint8_t opcode;  /* enum ibc_xport_opcode */
	int32_t peer;
};

/* a queue pair we post to, with its send ring */
struct vq {
	struct ibv_qp *qp;
	enum vq_kind kind;
	int peer;             /* RC: the peer rank (may be our own); others -1 */
	uint32_t index;       /* in vctx.vqs */
	uint32_t sq_cap;
	uint64_t sq_head, sq_tail;
	struct vq_slot *slots;
	uint32_t psn;
	int rtr, rts;
	struct ibc_xport_mcast *group; /* VQ_MCAST */
	int node;             /* VQ_XRC_INI: the remote node */
};

/* one posted receive */
struct rslot {
	uint64_t wr_id;
	struct vq *vq;        /* NULL: the XRC SRQ */
	int32_t next_free;    /* free-list link, -1 ends */
	uint8_t mcast;
	uint8_t used;
	uint8_t nsge;         /* mcast with drop injection: the scatter list kept ... */
	struct ibv_sge *sge;  /* ... to post the buffer again when a datagram is dropped */
};

struct vmr {                  /* behind ibc_xport_mr.priv */
	struct ibv_mr *mr;
	void *owned;          /* mr_alloc'd memory, freed at dereg */
	struct vmr *prev, *next;
	struct ibc_xport_mr pub;
};

struct vgroup;                /* verbs_mcast.c */
struct vxrc;                  /* verbs_xrc.c */

struct vctx {
	struct ibc_xport *x;
	char devname[IBC_XPORT_NAME_MAX];
	struct ibv_context *ctx;
	struct ibv_device_attr dev_attr;
	struct ibv_port_attr port_attr;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	int use_grh;
	int roce_v2;
	uint32_t ipv4;        /* network order, 0 when the GID is not IPv4-mapped */
	struct ibv_pd *pd;
	struct ibv_cq *send_cq, *recv_cq;
	void *scratch;        /* GRH sink for multicast receives */
	struct ibv_mr *scratch_mr;
	uint32_t max_rd_atomic;

	struct vq **vqs;      /* by index; NULL holes after destroy */
	uint32_t nvqs, vqs_cap;
	struct vq **peer_vq;  /* RC: x->size entries */
	uint8_t *connected;   /* x->size entries */

	struct rslot *rslots;
	int32_t rfree;
	uint32_t rslots_cap;

	struct vmr *mrs;      /* live registrations */
	struct vgroup *groups;
	struct vxrc *xrc;     /* conn == XRC */

	/* scratch for post lists */
	struct ibv_send_wr *pwr;
	struct ibv_sge *psge;
	uint32_t pcap;
	struct ibv_recv_wr *rwr;
	struct ibv_sge *rsge;
	uint32_t rcap;

	struct ibc_xport_stats st;
	uint64_t rng;         /* drop injection (params.mcast_drop), seeded per rank */
};

static inline struct vctx *vctx_of(struct ibc_xport *x)
{
	return (struct vctx *)x->priv;
}

/* verbs_qp.c: what every verbs file stands on */
void ibc_xport_verbs_err(const struct vctx *v, const char *call, int err);
int ibc_xport_verbs_vq_add(struct vctx *v, struct ibv_qp *qp, enum vq_kind kind, int peer,
			   struct vq **out);
void ibc_xport_verbs_vq_destroy(struct vctx *v, struct vq *q);
uint32_t ibc_xport_verbs_psn_make(const struct vctx *v, uint32_t salt);
int ibc_xport_verbs_qp_init(struct vctx *v, struct ibv_qp *qp, unsigned access);
int ibc_xport_verbs_qp_rtr(struct vctx *v, struct ibv_qp *qp, uint32_t dest_qpn,
			   uint32_t rq_psn, const union ibv_gid *dgid, uint16_t dlid,
			   enum ibv_mtu mtu, int is_rc_responder);
int ibc_xport_verbs_qp_rts(struct vctx *v, struct ibv_qp *qp, uint32_t sq_psn, int initiator);
int ibc_xport_verbs_status_of_errno(int err);

/* verbs_post.c */
int ibc_xport_verbs_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted);
int ibc_xport_verbs_recv_post(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
			      int *posted);
int ibc_xport_verbs_cq_poll(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n);

/* verbs_mcast.c */
int ibc_xport_verbs_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			       struct ibc_xport_mcast **out);
int ibc_xport_verbs_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *g);
struct vq *ibc_xport_verbs_mcast_vq(struct ibc_xport_mcast *g);
void ibc_xport_verbs_mcast_ud(struct ibc_xport_mcast *g, struct ibv_send_wr *wr);
void ibc_xport_verbs_mcast_leave_all(struct vctx *v);

/* verbs_xrc.c */
int ibc_xport_verbs_xrc_open(struct vctx *v);
void ibc_xport_verbs_xrc_close(struct vctx *v);
int ibc_xport_verbs_xrc_connect(struct vctx *v, const uint8_t *pairs);
/* the initiator queue reaching peer and the peer's SRQ number */
int ibc_xport_verbs_xrc_route(struct vctx *v, int peer, struct vq **q, uint32_t *srqn);
struct ibv_srq *ibc_xport_verbs_xrc_srq(struct vctx *v);
int ibc_xport_verbs_xrc_peer_of_qpn(struct vctx *v, uint32_t src_qp);

#endif
