/* Two-sided messages for the baselines: an MPI-like layer over SEND/RECV.
 *
 * One receive pool per transport, shared by the instances on it (receives
 * of one connection are consumed in order, whoever posted them): K slots
 * per peer, each a 64-byte header and up to the pool's eager payload.  A
 * message's header names its instance; the router hands the slot to that
 * instance's queue for the peer (data: EAGER, RTS, FIN; control: CTS), and
 * the slot is posted again once the instance has read it.
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

#include <stdlib.h>
#include <string.h>

#define P2P_K 16        /* receive slots per peer, and send slots per instance */
#define P2P_HDR 64
#define P2P_MAX_POOLS 16

enum p2p_type { P2P_EAGER = 1, P2P_RTS = 2, P2P_CTS = 3, P2P_FIN = 4, P2P_DRAIN = 5 };

struct p2p_hdr {
	uint32_t tag;       /* the instance (its live index) */
	uint32_t type;
	uint64_t len;
	uint64_t addr;      /* CTS: the receive buffer */
	uint32_t rkey;
	uint32_t pad;
};

struct p2p_pool {
	struct ibc_xport *x;
	int refs;
	size_t eager, slot_size;
	struct ibc_xport_mr *mr;
	unsigned char *buf;
	uint64_t drained;   /* DRAIN messages received (not posted again) */
};

static struct p2p_pool *pools[P2P_MAX_POOLS];

struct p2p_q {
	uint8_t idx[P2P_K];
	unsigned head, tail;
};

struct a2a_p2p {
	struct p2p_pool *pool;
	struct p2p_q *data, *ctl;         /* [size] */
	struct ibc_xport_mr *smr;         /* P2P_K send slots */
	uint8_t busy[P2P_K];
	size_t eager;
};

#define A2A_ACCESS \
	(IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE | IBC_XPORT_ACCESS_REMOTE_READ)

static struct p2p_pool *pool_of(const struct ibc_xport *x)
{
	int i;

	for (i = 0; i < P2P_MAX_POOLS; i++)
		if (pools[i] && pools[i]->x == x)
			return pools[i];
	return NULL;
}

static unsigned char *slot_addr(const struct p2p_pool *pl, int peer, int k)
{
	return pl->buf + ((size_t)peer * P2P_K + (size_t)k) * pl->slot_size;
}

static int slot_post(struct p2p_pool *pl, int peer, int k)
{
	struct ibc_xport_sge sge = { .addr = (uintptr_t)slot_addr(pl, peer, k),
				     .len = (uint32_t)pl->slot_size, .lkey = pl->mr->lkey };
	struct ibc_xport_recv_wr wr = { .peer = peer, .num_sge = 1, .sge = &sge,
					.wr_id = (A2A_WRID_TAG << 56) |
						 ((uint64_t)A2A_WR_RECV << 32) |
						 (uint32_t)(peer * P2P_K + k) };
	int posted;

	return ibc_xport_recv_post(pl->x, &wr, 1, &posted);
}

static int pool_open(struct ibc_alltoall *a, struct p2p_pool **out)
{
	struct ibc_xport *x = a->x;
	struct p2p_pool *pl = pool_of(x);
	int i, peer, k, rc;

	if (pl) {
		pl->refs++;
		*out = pl;
		return IBC_OK;
	}
	for (i = 0; i < P2P_MAX_POOLS && pools[i]; i++)
		;
	if (i == P2P_MAX_POOLS)
		return IBC_ERR_NOMEM;
	pl = calloc(1, sizeof(*pl));
	if (pl == NULL)
		return IBC_ERR_NOMEM;
	pl->x = x;
	pl->refs = 1;
	pl->eager = a->params.eager_max;
	pl->slot_size = (P2P_HDR + pl->eager + 63) & ~(size_t)63;
	rc = ibc_xport_mr_alloc(x, pl->slot_size * P2P_K * (size_t)x->size,
				IBC_XPORT_ACCESS_LOCAL_WRITE, &pl->mr);
	if (rc) {
		free(pl);
		return rc;
	}
	pl->buf = pl->mr->addr;
	for (peer = 0; peer < x->size && rc == IBC_OK; peer++)
		for (k = 0; peer != x->rank && k < P2P_K && rc == IBC_OK; k++)
			rc = slot_post(pl, peer, k);
	if (rc) {
		ibc_error("alltoall: posting receive buffers: %s", ibc_status_str(rc));
		(void)ibc_xport_mr_dereg(x, pl->mr);
		free(pl);
		return rc;
	}
	pools[i] = pl;
	*out = pl;
	return IBC_OK;
}

int a2a_p2p_setup(struct ibc_alltoall *a)
{
	struct a2a_p2p *p = calloc(1, sizeof(*p));
	int rc, agreed;

	if (p == NULL)
		return IBC_ERR_NOMEM;
	a->p2p = p;
	p->data = calloc((size_t)a->size, sizeof(*p->data));
	p->ctl = calloc((size_t)a->size, sizeof(*p->ctl));
	if (p->data == NULL || p->ctl == NULL)
		rc = IBC_ERR_NOMEM;
	else
		rc = ibc_xport_connect(a->x, NULL);
	if (rc == IBC_OK)
		rc = pool_open(a, &p->pool);
	if (rc == IBC_OK) {
		p->eager = a->params.eager_max < p->pool->eager ? a->params.eager_max
								  : p->pool->eager;
		rc = ibc_xport_mr_alloc(a->x, p->pool->slot_size * P2P_K,
					IBC_XPORT_ACCESS_LOCAL_WRITE, &p->smr);
	}
	/* every rank's receives are posted before anyone sends */
	if (ibc_boot_agree(a->x->boot, rc, &agreed) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc ? rc : agreed;
}

static int msg_send(struct ibc_alltoall *a, int peer, enum p2p_type type, const void *payload,
		    size_t len, uint64_t addr, uint32_t rkey);

/* The last instance on a transport: every posted receive is consumed by a
 * DRAIN message from its peer (receives cannot be taken back), so the pool
 * can go and a later pool on the same transport starts from empty queues.
 * Collective: the instances are destroyed in the same order everywhere. */
static int pool_drain(struct ibc_alltoall *a, struct p2p_pool *pl)
{
	struct a2a_waiter w = A2A_WAITER(a);
	uint64_t want = (uint64_t)P2P_K * (uint64_t)(a->size - 1);
	int peer, k, rc = IBC_OK;

	for (peer = 0; peer < a->size && rc == IBC_OK; peer++)
		for (k = 0; peer != a->rank && k < P2P_K && rc == IBC_OK; k++)
			rc = msg_send(a, peer, P2P_DRAIN, NULL, 0, 0, 0);
	while (rc == IBC_OK && pl->drained < want) {
		rc = a2a_service(a);
		if (rc == IBC_OK && pl->drained < want)
			rc = a2a_tick(a, &w, "drain message", -1);
	}
	if (rc == IBC_OK)
		rc = a2a_drain(a);
	return rc;
}

void a2a_p2p_teardown(struct ibc_alltoall *a)
{
	struct a2a_p2p *p = a->p2p;
	struct p2p_pool *pl;
	int i;

	if (p == NULL)
		return;
	pl = p->pool;
	if (pl && --pl->refs == 0) {
		/* on failure the pool stays: its buffers may still be posted */
		if (a->failed == IBC_OK && pool_drain(a, pl) == IBC_OK) {
			for (i = 0; i < P2P_MAX_POOLS; i++)
				if (pools[i] == pl)
					pools[i] = NULL;
			(void)ibc_xport_mr_dereg(a->x, pl->mr);
			free(pl);
		}
	}
	if (p->smr)
		(void)ibc_xport_mr_dereg(a->x, p->smr);
	free(p->data);
	free(p->ctl);
	free(p);
	a->p2p = NULL;
}

static const struct p2p_hdr *hdr_at(const struct p2p_pool *pl, int peer, int k)
{
	return (const struct p2p_hdr *)slot_addr(pl, peer, k);
}

void a2a_p2p_recv_wc(struct ibc_xport *x, const struct ibc_xport_wc *wc, uint32_t index)
{
	struct p2p_pool *pl = pool_of(x);
	int peer = (int)(index / P2P_K), k = (int)(index % P2P_K);
	const struct p2p_hdr *h;
	struct ibc_alltoall *o;
	struct p2p_q *q;

	(void)wc;
	if (pl == NULL)
		return;
	h = hdr_at(pl, peer, k);
	if (h->type == P2P_DRAIN) {
		pl->drained++;
		return;
	}
	o = a2a_live_get(h->tag);
	if (o == NULL || o->p2p == NULL || o->x != x) {
		ibc_debug("alltoall: a message for a destroyed instance dropped");
		(void)slot_post(pl, peer, k);
		return;
	}
	q = h->type == P2P_CTS ? &o->p2p->ctl[peer] : &o->p2p->data[peer];
	q->idx[q->tail++ % P2P_K] = (uint8_t)k;
}

void a2a_p2p_send_wc(struct ibc_alltoall *a, uint32_t index)
{
	if (a->p2p && index < P2P_K)
		a->p2p->busy[index] = 0;
	if (a->outstanding > 0)
		a->outstanding--;
}

/* The head of a queue, or NULL. */
static const struct p2p_hdr *q_head(struct ibc_alltoall *a, struct p2p_q *q, int peer, int *k)
{
	if (q->head == q->tail)
		return NULL;
	*k = q->idx[q->head % P2P_K];
	return hdr_at(a->p2p->pool, peer, *k);
}

static int q_pop(struct ibc_alltoall *a, struct p2p_q *q, int peer, int k)
{
	q->head++;
	return slot_post(a->p2p->pool, peer, k);
}

static int msg_send(struct ibc_alltoall *a, int peer, enum p2p_type type, const void *payload,
		    size_t len, uint64_t addr, uint32_t rkey)
{
	struct a2a_p2p *p = a->p2p;
	struct a2a_waiter w = A2A_WAITER(a);
	struct p2p_hdr *h;
	struct ibc_xport_sge sge;
	size_t total = P2P_HDR + (type == P2P_EAGER ? len : 0);
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
	h = (struct p2p_hdr *)((unsigned char *)p->smr->addr + (size_t)k * p->pool->slot_size);
	h->tag = (uint32_t)a->live;
	h->type = type;
	h->len = len;
	h->addr = addr;
	h->rkey = rkey;
	if (type == P2P_EAGER && len > 0)
		a2a_copy(a, (unsigned char *)h + P2P_HDR, payload, len);
	sge.addr = (uintptr_t)h;
	sge.len = (uint32_t)total;
	sge.lkey = p->smr->lkey;
	rc = ibc_xport_send(a->x, peer, &sge, 1,
			    IBC_XPORT_WR_SIGNALED |
				    (total <= a->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0),
			    a2a_wrid(a, A2A_WR_SEND_SLOT, (uint32_t)k));
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
			if (rst == ST_WAIT_MSG && h->type == P2P_EAGER && h->len == rlen) {
				a2a_copy(a, rbuf, (const unsigned char *)h + P2P_HDR, rlen);
				rst = ST_DONE;
			} else if (rst == ST_WAIT_MSG && h->type == P2P_RTS && h->len == rlen) {
				rc = a2a_reg(a, rbuf, rlen, A2A_ACCESS, &rmr);
				if (rc == IBC_OK)
					rc = msg_send(a, from, P2P_CTS, NULL, rlen, (uintptr_t)rbuf,
						      rmr->rkey);
				rst = ST_WAIT_FIN;
			} else if (rst == ST_WAIT_FIN && h->type == P2P_FIN) {
				a2a_unreg(a, rmr);
				rmr = NULL;
				rst = ST_DONE;
			} else {
				ibc_error("alltoall %s rank %d: unexpected message (type %u, %llu "
					  "bytes) from rank %d, waiting for %zu bytes",
					  a->alg->name, a->rank, h->type,
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
