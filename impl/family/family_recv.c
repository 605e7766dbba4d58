/* The two-sided receive pool (family_recv.h). */
#include "family/family_recv.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

#define POOL_MAX 16
#define POOL_DRAIN_TAG UINT32_MAX
#define D IBC_FAMILY_RECV_DEPTH

enum { KIND_RECV = 1, KIND_DRAIN_SEND = 2 };

struct ibc_family_recv {
	struct ibc_family_member m;      /* the pool's own WRs: receives, drain sends */
	struct ibc_xport *x;
	int refs;
	size_t slot_size;
	struct ibc_xport_mr *mr;         /* size * D slots */
	struct ibc_xport_mr *smr;        /* a drain message (non-inline transports) */
	uint8_t *posted;                 /* [size]: sources with D slots posted */
	struct {
		ibc_family_recv_fn fn;
		void *owner;
	} by_tag[IBC_FAMILY_RECV_TAGS];
	uint64_t drained;                /* drain messages received (not posted again) */
	int outstanding;                 /* drain sends not completed */
};

static struct ibc_family_recv *pools[POOL_MAX];
static struct ibc_family_kind pool_kind = { "receive pool", 0 };

void *ibc_family_recv_slot(const struct ibc_family_recv *p, int peer, int k)
{
	return (unsigned char *)p->mr->addr + ((size_t)peer * D + (size_t)k) * p->slot_size;
}

size_t ibc_family_recv_slot_bytes(const struct ibc_family_recv *p)
{
	return p->slot_size;
}

int ibc_family_recv_repost(struct ibc_family_recv *p, int peer, int k)
{
	struct ibc_xport_sge sge = { .addr = (uint64_t)(uintptr_t)ibc_family_recv_slot(p, peer, k),
				     .len = (uint32_t)p->slot_size, .lkey = p->mr->lkey };
	int rc = ibc_xport_recv(p->x, peer, NULL, &sge, 1,
				ibc_family_wrid(&p->m, KIND_RECV, (uint32_t)(peer * D + k)));

	if (rc)
		ibc_error("posting a receive from rank %d: %s", peer, ibc_status_str(rc));
	return rc;
}

static int pool_wc(void *arg, const struct ibc_xport_wc *wc, unsigned kind, uint32_t index)
{
	struct ibc_family_recv *p = arg;
	int peer = (int)(index / D), k = (int)(index % D);
	const struct ibc_family_recv_hdr *h;

	if (wc->status != IBC_OK) {
		ibc_error("rank %d: a %s %s rank %d failed: %s", p->x->rank,
			  kind == KIND_RECV ? "receive" : "drain message",
			  kind == KIND_RECV ? "from" : "to", wc->peer, wc->reason ? wc->reason : "?");
		if (kind == KIND_DRAIN_SEND && p->outstanding > 0)
			p->outstanding--;
		return wc->status < 0 ? wc->status : IBC_ERR_REMOTE;
	}
	if (kind == KIND_DRAIN_SEND) {
		if (p->outstanding > 0)
			p->outstanding--;
		return IBC_OK;
	}
	if (peer >= p->x->size)
		return IBC_OK;
	h = ibc_family_recv_slot(p, peer, k);
	if (wc->byte_len >= sizeof(*h) && h->tag == POOL_DRAIN_TAG) {
		p->drained++;
		return IBC_OK; /* not posted again: the queue empties */
	}
	if (wc->byte_len < sizeof(*h) || h->tag >= IBC_FAMILY_RECV_TAGS ||
	    p->by_tag[h->tag].owner == NULL) {
		ibc_warn("a %u-byte message from rank %d for no instance (tag %u) ignored",
			 wc->byte_len, peer, wc->byte_len >= sizeof(*h) ? h->tag : 0);
		return ibc_family_recv_repost(p, peer, k);
	}
	if (p->by_tag[h->tag].fn(p->by_tag[h->tag].owner, peer, k, h, wc->byte_len))
		return IBC_OK;
	return ibc_family_recv_repost(p, peer, k);
}

static void pool_free(struct ibc_family_recv *p)
{
	int i;

	for (i = 0; i < POOL_MAX; i++)
		if (pools[i] == p)
			pools[i] = NULL;
	ibc_family_remove(&p->m);
	if (p->mr)
		(void)ibc_xport_mr_dereg(p->x, p->mr);
	if (p->smr)
		(void)ibc_xport_mr_dereg(p->x, p->smr);
	free(p->posted);
	free(p);
}

static int pool_open(struct ibc_xport *x, size_t slot_bytes, struct ibc_family_recv **out)
{
	struct ibc_family_recv *p;
	int i, rc;

	for (i = 0; i < POOL_MAX && pools[i]; i++)
		;
	if (i == POOL_MAX) {
		ibc_error("more than %d transports with two-sided instances", POOL_MAX);
		return IBC_ERR_NOMEM;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return IBC_ERR_NOMEM;
	p->m.live = -1;
	p->x = x;
	p->slot_size = (slot_bytes + 63) & ~(size_t)63;
	if (p->slot_size < IBC_FAMILY_RECV_MIN_SLOT)
		p->slot_size = IBC_FAMILY_RECV_MIN_SLOT;
	p->posted = calloc((size_t)x->size, 1);
	if (p->posted == NULL) {
		free(p);
		return IBC_ERR_NOMEM;
	}
	rc = ibc_family_add(&p->m, &pool_kind, pool_wc, p);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, (size_t)x->size * D * p->slot_size, IBC_XPORT_ACCESS_ALL,
					&p->mr);
	if (rc == IBC_OK && x->caps.max_inline < sizeof(struct ibc_family_recv_hdr))
		rc = ibc_xport_mr_alloc(x, sizeof(struct ibc_family_recv_hdr),
					IBC_XPORT_ACCESS_LOCAL_WRITE, &p->smr);
	if (rc) {
		ibc_error("registering receive buffers: %s", ibc_status_str(rc));
		pool_free(p);
		return rc;
	}
	pools[i] = p;
	*out = p;
	return IBC_OK;
}

int ibc_family_recv_join(struct ibc_xport *x, size_t slot_bytes, const uint8_t *sources,
			 ibc_family_recv_fn fn, void *owner, struct ibc_family_recv **pool,
			 uint32_t *tag)
{
	struct ibc_family_recv *p = NULL;
	uint32_t t;
	int i, r, k, rc;

	*pool = NULL;
	for (i = 0; i < POOL_MAX && p == NULL; i++)
		if (pools[i] && pools[i]->x == x)
			p = pools[i];
	if (p == NULL && (rc = pool_open(x, slot_bytes, &p)) != IBC_OK)
		return rc;
	for (t = 0; t < IBC_FAMILY_RECV_TAGS && p->by_tag[t].owner; t++)
		;
	if (t == IBC_FAMILY_RECV_TAGS) {
		ibc_error("more than %d two-sided instances on one transport",
			  IBC_FAMILY_RECV_TAGS);
		if (p->refs == 0)
			pool_free(p);
		return IBC_ERR_NOMEM;
	}
	p->by_tag[t].fn = fn;
	p->by_tag[t].owner = owner;
	p->refs++;
	*pool = p;
	*tag = t;
	for (r = 0; r < x->size; r++) {
		if (r == x->rank || (sources && !sources[r]) || p->posted[r])
			continue;
		for (k = 0; k < D; k++)
			if ((rc = ibc_family_recv_repost(p, r, k)) != IBC_OK)
				return rc;
		p->posted[r] = 1;
	}
	return IBC_OK;
}

static int drain_send(struct ibc_family_recv *p, int peer, struct ibc_family_waiter *w)
{
	static const struct ibc_family_recv_hdr drain = { POOL_DRAIN_TAG, 0 };
	struct ibc_xport_sge sge = { .addr = (uint64_t)(uintptr_t)&drain, .len = sizeof(drain) };
	unsigned flags = IBC_XPORT_WR_SIGNALED | IBC_XPORT_WR_INLINE;
	int rc;

	if (p->smr) {
		memcpy(p->smr->addr, &drain, sizeof(drain));
		sge.addr = (uint64_t)(uintptr_t)p->smr->addr;
		sge.lkey = p->smr->lkey;
		flags = IBC_XPORT_WR_SIGNALED;
	}
	for (;;) {
		rc = ibc_xport_send(p->x, peer, &sge, 1, flags,
				    ibc_family_wrid(&p->m, KIND_DRAIN_SEND, 0));
		if (rc != IBC_ERR_AGAIN)
			break;
		rc = ibc_family_service(p->x, IBC_XPORT_CQ_ANY);
		if (rc == IBC_OK)
			rc = ibc_family_tick(p->x, w);
		if (rc)
			return rc;
	}
	if (rc)
		ibc_error("rank %d: a drain message to rank %d: %s", p->x->rank, peer,
			  ibc_status_str(rc));
	else
		p->outstanding++;
	return rc;
}

int ibc_family_recv_leave(struct ibc_family_recv *p, uint32_t tag, int ok, int64_t deadline_ns)
{
	struct ibc_family_waiter w = IBC_FAMILY_WAITER(deadline_ns, 0, 16);
	struct ibc_xport *x;
	int *mine = NULL, *all = NULL, r, k, n, rc = IBC_OK, any = 0;
	uint64_t expect = 0;

	if (p == NULL)
		return IBC_OK;
	x = p->x;
	n = x->size;
	if (tag < IBC_FAMILY_RECV_TAGS)
		p->by_tag[tag].owner = NULL;
	if (--p->refs > 0)
		return IBC_OK;
	if (!ok)
		return IBC_OK; /* the pool stays: its buffers may still be posted */
	/* the last one: empty every queue, then free */
	mine = calloc((size_t)n, sizeof(*mine));
	all = calloc((size_t)n * (size_t)n, sizeof(*all));
	if (!mine || !all) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	for (r = 0; r < n; r++) {
		mine[r] = p->posted[r] ? D : 0;
		expect += (uint64_t)mine[r];
	}
	rc = ibc_boot_allgather(x->boot, mine, all, (size_t)n * sizeof(*mine));
	if (rc) {
		ibc_error("exchanging receive counts: %s", ibc_status_str(rc));
		goto out_free;
	}
	for (r = 0; r < n * n; r++)
		any |= all[r] != 0;
	for (r = 0; any && r < n && rc == IBC_OK; r++)
		for (k = 0; k < all[(size_t)r * (size_t)n + (size_t)x->rank] && rc == IBC_OK; k++)
			rc = drain_send(p, r, &w);
	while (any && rc == IBC_OK && (p->drained < expect || p->outstanding > 0)) {
		rc = ibc_family_service(x, IBC_XPORT_CQ_ANY);
		if (rc == IBC_OK && (p->drained < expect || p->outstanding > 0))
			rc = ibc_family_tick(x, &w);
	}
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("rank %d: %llu of %llu drain messages after %g s", x->rank,
			  (unsigned long long)p->drained, (unsigned long long)expect,
			  (double)deadline_ns / 1e9);
	if (rc == IBC_OK)
		pool_free(p); /* on failure the pool stays: its buffers may still be posted */
out_free:
	free(mine);
	free(all);
	return rc;
}
