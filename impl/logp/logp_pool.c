/* The logp kernels rtt-pool-1n and xchg-pool (logp_pool.h). */
#include "logp/logp_pool.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "family/family.h"
#include "family/family_recv.h"
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

#define WAIT_NS 30000000000LL
#define HDR sizeof(struct ibc_family_recv_hdr)

enum { WR_SEND = 1 };

struct ibc_logp_pool {
	const char *name;               /* the kernel's (the variant's) */
	struct ibc_xport *x;            /* the kernel's own transport */
	struct ibc_family_member fm;    /* its sends' WRs */
	struct ibc_family_recv *pool;
	uint32_t tag;
	int joined;
	struct ibc_xport_mr *src;       /* per destination: header, m bytes */
	size_t m, slot;
	int p, validate;
	uint64_t *got;                  /* [size]: messages received from each rank */
	uint64_t round;                 /* round trips this rank has begun */
	int sending;                    /* sends not completed */
	int failed;                     /* a send's completion error */
	long iter;
	uint64_t bad;
	long bad_iter;
	int bad_from;
	size_t bad_off;
};

static struct ibc_family_kind kind = { "logp receive-pool kernel", 0 };

/* The kernel's transport, shared by its instances (one per p in a point:
 * one transport each would run out of pools, family_recv.c's POOL_MAX);
 * every rank opens and closes it at the same instance, as they set up and
 * tear down the same operations in the same order. */
static struct {
	struct ibc_xport *x;
	int refs;
} shared;

static int shared_get(struct ibc_boot *boot, const struct ibc_xport *like, struct ibc_xport **x)
{
	int rc = IBC_OK;

	if (shared.refs == 0) {
		rc = ibc_xport_open(boot, &like->params, &shared.x);
		if (rc == IBC_OK)
			rc = ibc_xport_connect(shared.x, NULL);
		if (rc != IBC_OK) {
			if (shared.x != NULL)
				(void)ibc_xport_close(shared.x);
			shared.x = NULL;
			return rc;
		}
	}
	shared.refs++;
	*x = shared.x;
	return IBC_OK;
}

static int shared_put(void)
{
	int rc = IBC_OK;

	if (--shared.refs == 0) {
		rc = ibc_xport_close(shared.x);
		shared.x = NULL;
	}
	return rc;
}

static int recv_fn(void *owner, int peer, int k, const void *msg, uint32_t len)
{
	struct ibc_logp_pool *q = owner;

	(void)k;
	if (q->validate) {
		size_t off = 0, bad = len != HDR + q->m ? q->m : ibc_suite_pattern_check(
			(const unsigned char *)msg + HDR, q->m,
			ibc_suite_pattern_seed(peer, q->x->rank, (uint64_t)q->iter, 0), &off);

		if (bad > 0 && q->bad == 0) {
			q->bad_iter = q->iter;
			q->bad_from = peer;
			q->bad_off = off;
		}
		q->bad += bad;
	}
	q->got[peer]++;
	return 0; /* read: the pool posts the slot again now */
}

static int send_wc(void *owner, const struct ibc_xport_wc *wc, unsigned k, uint32_t index)
{
	struct ibc_logp_pool *q = owner;

	(void)k;
	(void)index;
	q->sending--;
	if (wc->status != IBC_OK && q->failed == IBC_OK) {
		ibc_error("logp %s rank %d: a send to rank %d failed: %s", q->name, q->x->rank, wc->peer,
			  wc->reason ? wc->reason : ibc_status_str(wc->status));
		q->failed = wc->status < 0 ? wc->status : IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

unsigned char *ibc_logp_pool_payload(struct ibc_logp_pool *q, int peer)
{
	return (unsigned char *)q->src->addr + (size_t)peer * q->slot + HDR;
}

void ibc_logp_pool_iter_set(struct ibc_logp_pool *q, long iter)
{
	q->iter = iter;
}

uint64_t ibc_logp_pool_bad(const struct ibc_logp_pool *q, long *iter, int *from, size_t *off)
{
	*iter = q->bad_iter;
	*from = q->bad_from;
	*off = q->bad_off;
	return q->bad;
}

static int send_to(struct ibc_logp_pool *q, int peer)
{
	struct ibc_xport_sge sge = { (uintptr_t)q->src->addr + (size_t)peer * q->slot,
				     (uint32_t)(HDR + q->m), q->src->lkey };
	unsigned flags = IBC_XPORT_WR_SIGNALED |
			 (HDR + q->m <= q->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0);
	int rc = ibc_xport_send(q->x, peer, &sge, 1, flags, ibc_family_wrid(&q->fm, WR_SEND, 0));

	if (rc == IBC_OK)
		q->sending++;
	else
		ibc_error("logp %s rank %d: send to rank %d: %s", q->name, q->x->rank, peer,
			  ibc_status_str(rc));
	return rc;
}

/* Services the completion queues until every rank r in [lo, hi] has sent
 * round messages (recv) or no send is outstanding (!recv). */
static int wait_for(struct ibc_logp_pool *q, int recv, int lo, int hi)
{
	struct ibc_family_waiter w = IBC_FAMILY_WAITER(WAIT_NS, 0, 256);
	int r = lo, rc;

	for (;;) {
		/* a receive is awaited as the collectives await it, their send
		 * completions handled as they come */
		rc = ibc_family_service(q->x, recv ? IBC_XPORT_CQ_ANY : IBC_XPORT_CQ_SEND);
		if (rc == IBC_OK)
			rc = q->failed;
		if (rc)
			return rc;
		if (recv) {
			while (r <= hi && q->got[r] >= q->round)
				r++;
			if (r > hi)
				return IBC_OK;
		} else if (q->sending == 0) {
			return IBC_OK;
		}
		rc = ibc_family_tick(q->x, &w);
		if (rc == IBC_ERR_TIMEOUT)
			return ibc_family_timeout("logp", q->name, q->x->rank, "round trip",
						  (unsigned long long)q->round,
						  recv ? "message" : "send completion", recv ? r : q->x->rank,
						  (double)WAIT_NS / 1e9);
		if (rc)
			return rc;
	}
}

int ibc_logp_pool_rtt(struct ibc_logp_pool *q, double *us)
{
	uint64_t t0;
	int i, rc = IBC_OK;

	*us = 0;
	q->round++;
	if (q->x->rank == 0) {
		t0 = ibc_timer_ticks();
		for (i = 1; i <= q->p && rc == IBC_OK; i++)
			rc = send_to(q, i);
		if (rc == IBC_OK)
			rc = wait_for(q, 1, 1, q->p);
		*us = ibc_timer_ticks_to_us(ibc_timer_ticks() - t0) / q->p;
	} else if (q->x->rank <= q->p) {
		rc = wait_for(q, 1, 0, 0);
		if (rc == IBC_OK)
			rc = send_to(q, 0);
	}
	return rc == IBC_OK ? wait_for(q, 0, 0, 0) : rc;
}

int ibc_logp_pool_xchg(struct ibc_logp_pool *q, double *us)
{
	int peer = q->x->rank ^ 1, rc;
	uint64_t t0;

	if (us != NULL)
		*us = 0;
	if (peer >= q->x->size)
		return IBC_OK;
	q->round++;
	t0 = us != NULL ? ibc_timer_ticks() : 0;
	rc = send_to(q, peer);
	if (rc == IBC_OK)
		rc = wait_for(q, 1, peer, peer);
	if (us != NULL)
		*us = ibc_timer_ticks_to_us(ibc_timer_ticks() - t0);
	return rc == IBC_OK ? wait_for(q, 0, 0, 0) : rc;
}

static void pool_free(struct ibc_logp_pool *q)
{
	ibc_family_remove(&q->fm);
	free(q->got);
	free(q);
}

int ibc_logp_pool_close(struct ibc_logp_pool *q)
{
	int rc = IBC_OK, r;

	if (q == NULL)
		return IBC_OK;
	if (q->joined)
		rc = ibc_family_recv_leave(q->pool, q->tag, q->failed == IBC_OK, WAIT_NS);
	if (q->src != NULL)
		(void)ibc_xport_mr_dereg(q->x, q->src);
	if (q->x != NULL) {
		r = shared_put();
		if (rc == IBC_OK)
			rc = r;
	}
	pool_free(q);
	return rc;
}

int ibc_logp_pool_open(struct ibc_boot *boot, const struct ibc_xport *like, const char *name,
		       size_t m, int p, int validate, struct ibc_logp_pool **out)
{
	struct ibc_logp_pool *q = calloc(1, sizeof(*q));
	int rc, r;

	*out = NULL;
	if (q == NULL)
		return IBC_ERR_NOMEM; /* the peers block in the collective open: as barrier_check */
	q->fm.live = -1;
	q->name = name;
	q->m = m;
	q->p = p;
	q->validate = validate;
	q->slot = (HDR + m + 63) & ~(size_t)63;
	q->got = calloc((size_t)boot->size, sizeof(*q->got));
	rc = q->got == NULL ? IBC_ERR_NOMEM : shared_get(boot, like, &q->x);
	if (rc == IBC_OK)
		rc = ibc_family_add(&q->fm, &kind, send_wc, q);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(q->x, q->slot * (size_t)boot->size,
					IBC_XPORT_ACCESS_LOCAL_WRITE, &q->src);
	if (rc == IBC_OK)
		rc = ibc_family_recv_join(q->x, HDR + m, NULL, recv_fn, q, &q->pool, &q->tag);
	if (rc == IBC_OK)
		q->joined = 1;
	/* the pool's slots are sized by its first instance */
	if (rc == IBC_OK && ibc_family_recv_slot_bytes(q->pool) < HDR + m) {
		ibc_error("logp %s rank %d: a %zu-byte message does not fit the receive pool's "
			  "%zu-byte slots", name, boot->rank, HDR + m, ibc_family_recv_slot_bytes(q->pool));
		rc = IBC_ERR_INVAL;
	}
	if (rc == IBC_OK) {
		for (r = 0; r < boot->size; r++) {
			struct ibc_family_recv_hdr h = { q->tag, 0 };
			unsigned char *s = (unsigned char *)q->src->addr + (size_t)r * q->slot;

			memcpy(s, &h, HDR);
			memset(s + HDR, 1, m);
		}
		/* every rank's receives are posted before anyone sends */
		rc = ibc_boot_barrier(boot);
	}
	if (rc != IBC_OK) {
		ibc_error("logp %s rank %d: setting up its transport and receive pool: %s", name,
			  boot->rank, ibc_status_str(rc));
		(void)ibc_logp_pool_close(q);
		return rc;
	}
	*out = q;
	return IBC_OK;
}
