/* Two-sided messages for the baselines: an MPI-like layer over SEND/RECV.
 *
 * The receive buffers are the transport's receive pool (family_recv.h),
 * shared with every two-sided instance on it, of any family: a message's
 * header names its instance's tag in the pool; the pool hands the slot to
 * that instance's queue for the peer (data: EAGER, RTS, FIN; control: CTS),
 * and the slot is posted again once the instance has read it.
 *
 * Protocols (as MVAPICH's): eager = the payload copied into a send slot and
 * out of the receive slot; rendezvous = RTS, then CTS with the receive
 * buffer registered through the registration cache, then the sender's RDMA
 * write from its registered buffer and a FIN behind it on the same
 * connection (ordered). */
#include "alltoall/alltoall_impl.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "family/family_recv.h"

#include <stdlib.h>
#include <string.h>

#define P2P_K 16        /* send slots per instance */

enum p2p_type { P2P_EAGER = 1, P2P_RTS = 2, P2P_CTS = 3, P2P_FIN = 4 };

struct p2p_hdr {
	struct ibc_family_recv_hdr f; /* the instance's tag in the pool; user = type */
	uint64_t len;
	uint64_t addr;      /* CTS: the receive buffer */
	uint32_t rkey;
	uint32_t pad;
};

#define P2P_LINE 64

/* Where an eager payload of len bytes starts in its message: right behind
 * the header when both fit one line (an 8-byte all-to-all 8-11% faster at
 * N = 2 on shm than on two lines), else on the next line (a 4 KiB block
 * copied in and out on line boundaries: 4-5% faster than right behind the
 * header); docs/model.md */
static size_t payload_off(size_t len)
{
	return sizeof(struct p2p_hdr) + len <= P2P_LINE ? sizeof(struct p2p_hdr) : P2P_LINE;
}

struct p2p_q {
	uint8_t idx[IBC_FAMILY_RECV_DEPTH];
	unsigned head, tail;
};

struct a2a_p2p {
	struct ibc_family_member m;       /* the send slots' WRs */
	struct ibc_family_recv *pool;
	uint32_t tag;
	int joined;
	struct p2p_q *data, *ctl;         /* [size] */
	struct ibc_xport_mr *smr;         /* P2P_K send slots */
	size_t slot_size;
	uint8_t busy[P2P_K];
	size_t eager;
};

#define A2A_ACCESS \
	(IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE | IBC_XPORT_ACCESS_REMOTE_READ)

/* A message of the pool for a: queued until a reads it. */
static int p2p_recv(void *owner, int peer, int k, const void *msg, uint32_t len)
{
	struct ibc_alltoall *o = owner;
	const struct p2p_hdr *h = msg;
	struct p2p_q *q;

	(void)len;
	q = h->f.user == P2P_CTS ? &o->p2p->ctl[peer] : &o->p2p->data[peer];
	q->idx[q->tail++ % IBC_FAMILY_RECV_DEPTH] = (uint8_t)k;
	return 1;
}

/* A completion of a send slot. */
static int p2p_send_wc(void *owner, const struct ibc_xport_wc *wc, unsigned kind,
		       uint32_t index)
{
	struct ibc_alltoall *a = owner;

	(void)kind;
	if (wc->status != IBC_OK) {
		a2a_wc_failed(a, wc);
		return IBC_OK;
	}
	if (a->p2p && index < P2P_K)
		a->p2p->busy[index] = 0;
	if (a->outstanding > 0)
		a->outstanding--;
	return IBC_OK;
}

int a2a_p2p_setup(struct ibc_alltoall *a)
{
	struct a2a_p2p *p = calloc(1, sizeof(*p));
	int rc, agreed;

	if (p == NULL)
		return IBC_ERR_NOMEM;
	a->p2p = p;
	p->m.live = -1;
	p->data = calloc((size_t)a->size, sizeof(*p->data));
	p->ctl = calloc((size_t)a->size, sizeof(*p->ctl));
	if (p->data == NULL || p->ctl == NULL)
		rc = IBC_ERR_NOMEM;
	else
		rc = ibc_xport_connect(a->x, NULL);
	if (rc == IBC_OK)
		rc = ibc_family_add(&p->m, &a2a_family_kind, p2p_send_wc, a);
	if (rc == IBC_OK) {
		rc = ibc_family_recv_join(a->x, P2P_LINE + a->params.eager_max, NULL, p2p_recv, a,
					  &p->pool, &p->tag);
		p->joined = p->pool != NULL;
		if (rc)
			ibc_error("alltoall %s rank %d: joining the receive pool: %s", a->alg->name,
				  a->rank, ibc_status_str(rc));
	}
	if (rc == IBC_OK) {
		/* the pool's slots are as large as its first member asked */
		p->slot_size = ibc_family_recv_slot_bytes(p->pool);
		p->eager = p->slot_size - P2P_LINE < a->params.eager_max ? p->slot_size - P2P_LINE
									: a->params.eager_max;
		rc = ibc_xport_mr_alloc(a->x, p->slot_size * P2P_K, IBC_XPORT_ACCESS_LOCAL_WRITE,
					&p->smr);
	}
	/* every rank's receives are posted before anyone sends */
	if (ibc_boot_agree(a->x->boot, rc, &agreed) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc ? rc : agreed;
}

void a2a_p2p_teardown(struct ibc_alltoall *a)
{
	struct a2a_p2p *p = a->p2p;
	int rc;

	if (p == NULL)
		return;
	if (p->joined) {
		rc = ibc_family_recv_leave(p->pool, p->tag, a->failed == IBC_OK, a->deadline_ns);
		if (rc && a->failed == IBC_OK)
			a->failed = rc;
	}
	ibc_family_remove(&p->m);
	if (p->smr)
		(void)ibc_xport_mr_dereg(a->x, p->smr);
	free(p->data);
	free(p->ctl);
	free(p);
	a->p2p = NULL;
}

static const struct p2p_hdr *hdr_at(const struct a2a_p2p *p, int peer, int k)
{
	return (const struct p2p_hdr *)ibc_family_recv_slot(p->pool, peer, k);
}

/* The head of a queue, or NULL. */
static const struct p2p_hdr *q_head(struct ibc_alltoall *a, struct p2p_q *q, int peer, int *k)
{
	if (q->head == q->tail)
		return NULL;
	*k = q->idx[q->head % IBC_FAMILY_RECV_DEPTH];
	return hdr_at(a->p2p, peer, *k);
}

static int q_pop(struct ibc_alltoall *a, struct p2p_q *q, int peer, int k)
{
	q->head++;
	return ibc_family_recv_repost(a->p2p->pool, peer, k);
}

static int msg_send(struct ibc_alltoall *a, int peer, enum p2p_type type, const void *payload,
		    size_t len, uint64_t addr, uint32_t rkey)
{
	struct a2a_p2p *p = a->p2p;
	struct a2a_waiter w = A2A_WAITER(a);
	struct p2p_hdr *h;
	struct ibc_xport_sge sge;
	size_t total = type == P2P_EAGER ? payload_off(len) + len : sizeof(*h);
	int k, rc;

	for (;;) {
		for (k = 0; k < P2P_K && p->busy[k]; k++)
			;
		if (k < P2P_K)
			break;
		rc = a2a_tick(a, &w, "free send slot", peer);
		if (rc == IBC_OK)
			rc = a2a_service(a);
		if (rc)
			return rc;
	}
	h = (struct p2p_hdr *)((unsigned char *)p->smr->addr + (size_t)k * p->slot_size);
	h->f.tag = p->tag;
	h->f.user = type;
	h->len = len;
	h->addr = addr;
	h->rkey = rkey;
	if (type == P2P_EAGER && len > 0)
		a2a_copy(a, (unsigned char *)h + payload_off(len), payload, len);
	sge.addr = (uintptr_t)h;
	sge.len = (uint32_t)total;
	sge.lkey = p->smr->lkey;
	rc = ibc_xport_send(a->x, peer, &sge, 1,
			    IBC_XPORT_WR_SIGNALED |
				    (total <= a->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0),
			    ibc_family_wrid(&p->m, A2A_WR_SEND_SLOT, (uint32_t)k));
	if (rc) {
		ibc_error("alltoall %s rank %d: send to %d: %s", a->alg->name, a->rank, peer,
			  ibc_status_str(rc));
		return rc;
	}
	p->busy[k] = 1;
	a->outstanding++;
	a->cnt.sends++;
	return IBC_OK;
}

enum { ST_DONE = 0, ST_WAIT_CTS, ST_WAIT_MSG, ST_WAIT_FIN };

/* The sender's side on a CTS: the rendezvous write, then FIN. */
static int rndz_write(struct ibc_alltoall *a, int to, const void *sbuf, size_t slen,
		      const struct p2p_hdr *cts)
{
	struct ibc_xport_mr *mr;
	struct ibc_xport_sge sge;
	int rc;

	if (cts->len != slen) {
		ibc_error("alltoall %s rank %d: rank %d is ready for %llu bytes, not %zu",
			  a->alg->name, a->rank, to, (unsigned long long)cts->len, slen);
		return IBC_ERR_PROTO;
	}
	rc = a2a_reg(a, (void *)sbuf, slen, A2A_ACCESS, &mr);
	if (rc)
		return rc;
	sge.addr = (uintptr_t)sbuf;
	sge.len = (uint32_t)slen;
	sge.lkey = mr->lkey;
	rc = ibc_xport_write(a->x, to, &sge, 1, cts->addr, cts->rkey, 0,
			     a2a_wrid(a, A2A_WR_SIGNALED, 0));
	a2a_unreg(a, mr);  /* the run drains before it returns */
	if (rc == IBC_OK) {
		a->cnt.writes++;
		rc = msg_send(a, to, P2P_FIN, NULL, 0, 0, 0);
	}
	return rc;
}

int a2a_sendrecv(struct ibc_alltoall *a, int to, const void *sbuf, size_t slen, int from,
		 void *rbuf, size_t rlen, int force_rndz)
{
	struct a2a_p2p *p = a->p2p;
	struct a2a_waiter w = A2A_WAITER(a);
	struct ibc_xport_mr *rmr = NULL;
	int sst = ST_DONE, rst = from >= 0 ? ST_WAIT_MSG : ST_DONE, rc = IBC_OK, k;
	const struct p2p_hdr *h;

	if (to >= 0) {
		if (slen <= p->eager && !force_rndz) {
			rc = msg_send(a, to, P2P_EAGER, sbuf, slen, 0, 0);
		} else {
			rc = msg_send(a, to, P2P_RTS, NULL, slen, 0, 0);
			sst = ST_WAIT_CTS;
			a->cnt.rndz++;
		}
	}
	while (rc == IBC_OK && (sst != ST_DONE || rst != ST_DONE)) {
		int moved = 0;

		if (sst == ST_WAIT_CTS && (h = q_head(a, &p->ctl[to], to, &k)) != NULL) {
			rc = rndz_write(a, to, sbuf, slen, h);
			if (rc == IBC_OK)
				rc = q_pop(a, &p->ctl[to], to, k);
			sst = ST_DONE;
			moved = 1;
		}
		if (rc == IBC_OK && rst != ST_DONE &&
		    (h = q_head(a, &p->data[from], from, &k)) != NULL) {
			moved = 1;
			if (rst == ST_WAIT_MSG && h->f.user == P2P_EAGER && h->len == rlen) {
				a2a_copy(a, rbuf, (const unsigned char *)h + payload_off(rlen), rlen);
				rst = ST_DONE;
			} else if (rst == ST_WAIT_MSG && h->f.user == P2P_RTS && h->len == rlen) {
				rc = a2a_reg(a, rbuf, rlen, A2A_ACCESS, &rmr);
				if (rc == IBC_OK)
					rc = msg_send(a, from, P2P_CTS, NULL, rlen, (uintptr_t)rbuf,
						      rmr->rkey);
				rst = ST_WAIT_FIN;
			} else if (rst == ST_WAIT_FIN && h->f.user == P2P_FIN) {
				a2a_unreg(a, rmr);
				rmr = NULL;
				rst = ST_DONE;
			} else {
				ibc_error("alltoall %s rank %d: unexpected message (type %u, %llu "
					  "bytes) from rank %d, waiting for %zu bytes",
					  a->alg->name, a->rank, h->f.user,
					  (unsigned long long)h->len, from, rlen);
				rc = IBC_ERR_PROTO;
			}
			if (rc == IBC_OK)
				rc = q_pop(a, &p->data[from], from, k);
		}
		if (rc == IBC_OK && !moved) {
			rc = a2a_service(a);
			if (rc == IBC_OK && (sst != ST_DONE ? q_head(a, &p->ctl[to], to, &k) == NULL
							    : 1) &&
			    (rst != ST_DONE ? q_head(a, &p->data[from], from, &k) == NULL : 1))
				rc = a2a_tick(a, &w, sst != ST_DONE ? "CTS" : "message",
					      sst != ST_DONE ? to : from);
		}
	}
	if (rmr)
		a2a_unreg(a, rmr);
	return rc;
}
