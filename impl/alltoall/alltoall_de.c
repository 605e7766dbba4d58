/* DE, Direct Eager (Sur et al. §5.4, Fig. 13, eq. 4): zero copy.
 *
 * The user's send and receive buffers are registered whole, once, through
 * the registration cache (one entry each, hits on every later call with
 * the same buffers).  A call:
 *   1. sends its receive buffer's address and rkey by RDMA write to
 *      (rank + i) mod p, i = 1..p-1, in that order, each followed by the
 *      call's number (ordered behind it on the connection);
 *   2. step i = 1..p-1: waits for the address of (rank - i) mod p (the rank
 *      that sent its address to this one i-th, so the first wait is short),
 *      writes that rank's block straight from the send buffer into its
 *      receive buffer, then a completion flag behind it;
 *   3. waits for the completion flags of every peer.
 * The control region (one 64-byte record per peer) needs no halves: a peer
 * writes its next call's address only after it has this rank's data, which
 * this rank writes after it has read the address. */
#include "alltoall/alltoall_impl.h"

#include "core/log.h"
#include "core/status.h"
#include "pattern/pattern.h"

#include <stdlib.h>
#include <string.h>

struct de_rec {               /* ctl[j] on rank r: written by rank j */
	uint64_t addr;        /* j's receive buffer */
	uint64_t len;
	uint32_t rkey, pad;
	uint64_t addr_seq;    /* the call whose address this is */
	uint64_t done_seq;    /* j's block has landed in r's receive buffer */
	uint64_t spare[3];
};

struct de_priv {
	struct ibc_xport_mr *ctl;          /* [size] records, remote writable */
	struct ibc_xport_rdesc *rdesc;     /* [size] */
	struct ibc_xport_mr *src;          /* local: the address record and the seq word */
};

#define ACCESS_USER \
	(IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE | IBC_XPORT_ACCESS_REMOTE_READ)

static int de_setup(struct ibc_alltoall *a)
{
	struct de_priv *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL)
		return IBC_ERR_NOMEM;
	a->priv = d;
	d->rdesc = calloc((size_t)a->size, sizeof(*d->rdesc));
	if (d->rdesc == NULL)
		return IBC_ERR_NOMEM;
	rc = ibc_xport_mr_alloc(a->x, (size_t)a->size * sizeof(struct de_rec),
				IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE, &d->ctl);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(a->x, sizeof(struct de_rec), IBC_XPORT_ACCESS_LOCAL_WRITE,
					&d->src);
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(a->x, &d->ctl->rdesc, d->rdesc);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(a->x, NULL);
	return rc;
}

static void wr_set(struct ibc_xport_wr *w, struct ibc_alltoall *a, int peer,
		   const struct ibc_xport_sge *sge, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = a2a_wrid(a, A2A_WR_SIGNALED, 0);
	w->opcode = IBC_XPORT_OP_WRITE;
	w->flags = flags;
	w->peer = peer;
	w->num_sge = 1;
	w->sge = sge;
	w->remote_addr = raddr;
	w->rkey = rkey;
}

/* Two writes to peer: payload, then the 8-byte word at seq_off of this
 * rank's record there (set to the call's number); the second signaled. */
static int post_pair(struct ibc_alltoall *a, struct de_priv *d, int peer,
		     const struct ibc_xport_sge *payload, uint64_t raddr, uint32_t rkey,
		     size_t seq_off)
{
	struct de_rec *src = d->src->addr;
	struct ibc_xport_sge seq = { .addr = (uintptr_t)&src->addr_seq, .len = 8,
				     .lkey = d->src->lkey };
	unsigned inl = a->x->caps.max_inline >= sizeof(struct de_rec) ? IBC_XPORT_WR_INLINE : 0;
	struct ibc_xport_wr w[2];
	int posted, rc, nw = 0;
	uint64_t rec = d->rdesc[peer].addr + (uint64_t)a->rank * sizeof(struct de_rec);

	if (payload != NULL)
		wr_set(&w[nw++], a, peer, payload, raddr, rkey,
		       payload->len <= a->x->caps.max_inline ? inl : 0);
	wr_set(&w[nw++], a, peer, &seq, rec + seq_off, d->rdesc[peer].rkey,
	       IBC_XPORT_WR_SIGNALED | inl);
	rc = ibc_xport_post(a->x, w, nw, &posted);
	if (rc)
		ibc_error("alltoall de rank %d: writing to rank %d: %s", a->rank, peer,
			  ibc_status_str(rc));
	else
		a->outstanding++;
	return rc;
}

static int de_run(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m)
{
	struct de_priv *d = a->priv;
	struct de_rec *ctl = d->ctl->addr, *src = d->src->addr;
	struct ibc_xport_mr *smr = NULL, *rmr = NULL;
	int n = a->size, i, rc;
	size_t total = (size_t)n * m;

	rc = a2a_reg(a, (void *)sbuf, total, ACCESS_USER, &smr);
	if (rc == IBC_OK)
		rc = a2a_reg(a, rbuf, total, ACCESS_USER, &rmr);
	a2a_self_copy(a, sbuf, rbuf, m);
	/* 1. the receive buffer's address, in ring order */
	if (rc == IBC_OK) {
		struct ibc_xport_sge rec = { .addr = (uintptr_t)src, .len = 24, .lkey = d->src->lkey };

		src->addr = (uintptr_t)rbuf;
		src->len = total;
		src->rkey = rmr->rkey;
		src->addr_seq = a->seq;
		for (i = 1; i < n && rc == IBC_OK; i++) {
			int to = ibc_pattern_ring_next(n, a->rank, i);

			rc = post_pair(a, d, to, &rec,
				       d->rdesc[to].addr + (uint64_t)a->rank * sizeof(struct de_rec),
				       d->rdesc[to].rkey, offsetof(struct de_rec, addr_seq));
		}
	}
	/* 2. each peer's block, zero copy, as its address arrives */
	for (i = 1; i < n && rc == IBC_OK; i++) {
		int to = ibc_pattern_ring_prev(n, a->rank, i);
		struct ibc_xport_sge blk = { .addr = (uintptr_t)sbuf + (uint64_t)to * m,
					     .len = (uint32_t)m, .lkey = smr->lkey };

		a2a_jitter(a);
		rc = a2a_wait_u64(a, &ctl[to].addr_seq, a->seq, "receive buffer address", to);
		if (rc == IBC_OK && ctl[to].len < (uint64_t)n * m) {
			ibc_error("alltoall de rank %d: rank %d's receive buffer holds %llu bytes, "
				  "not %zu", a->rank, to, (unsigned long long)ctl[to].len, total);
			rc = IBC_ERR_PROTO;
		}
		if (rc == IBC_OK) {
			rc = post_pair(a, d, to, &blk, ctl[to].addr + (uint64_t)a->rank * m,
				       ctl[to].rkey, offsetof(struct de_rec, done_seq));
			a->cnt.writes++;
		}
	}
	/* 3. every block has landed here */
	for (i = 1; i < n && rc == IBC_OK; i++) {
		int from = ibc_pattern_ring_next(n, a->rank, i);

		rc = a2a_wait_u64(a, &ctl[from].done_seq, a->seq, "completion flag", from);
	}
	if (rc == IBC_OK)
		rc = a2a_drain(a); /* the send buffer is the user's again */
	if (smr)
		a2a_unreg(a, smr);
	if (rmr)
		a2a_unreg(a, rmr);
	return rc;
}

static void de_teardown(struct ibc_alltoall *a)
{
	struct de_priv *d = a->priv;

	if (d == NULL)
		return;
	if (d->ctl)
		(void)ibc_xport_mr_dereg(a->x, d->ctl);
	if (d->src)
		(void)ibc_xport_mr_dereg(a->x, d->src);
	free(d->rdesc);
	free(d);
	a->priv = NULL;
}

/* two rounds: every receive buffer's address out and in (a signal each),
 * then the n - 1 blocks written into the peers' user buffers and a
 * completion flag behind each (the flags are the round's messages);
 * copies: its own block first */
static int de_rounds(int n, struct ibc_pattern_round *r, int cap)
{
	int m = ibc_pattern_ring_rounds(n, 1, IBC_PATTERN_ROUND_WRITE, r, cap);

	if (m != 1)
		return m;
	if (r != NULL && cap >= 2) {
		r[0].blocks = 0;
		r[1] = r[0];
		r[1].user_writes = n - 1;
	}
	return a2a_rounds_copies(r, 2, cap, 1, 0, 0);
}

const struct ibc_alltoall_alg ibc_alltoall_alg_de = {
	.name = "de",
	.desc = "§5.4 Direct Eager: addresses by RDMA in ring order, each block written zero "
		"copy from the registered send buffer, then a completion flag",
	.needs = IBC_ALLTOALL_NEEDS_RDMA_WRITE | IBC_ALLTOALL_NEEDS_USER_MEM,
	.setup = de_setup, .run = de_run, .teardown = de_teardown,
	.rounds = de_rounds,
};
