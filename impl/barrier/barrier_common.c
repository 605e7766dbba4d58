/* Plumbing shared by the barrier algorithms: RDMA words (§4.1-4.2), two-sided
 * messages, waiting with the process's strategy, and the step loops. */
#include "barrier/barrier_impl.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define BARRIER_PROGRESS_EVERY 64 /* polls between progress calls (a power of 2) */

static int shared_attach(struct ibc_barrier *b);

void ibc_barrier_waiter_init(struct ibc_barrier_waiter *w)
{
	w->polls = 0;
	w->start_ns = 0;
}

int ibc_barrier_waiter_tick(struct ibc_barrier *b, struct ibc_barrier_waiter *w,
			    const char *what, int peer)
{
	ibc_wait_relax(b->x->wait, &w->polls);
	/* the transport's progress hooks run wherever a barrier waits */
	if ((w->polls & (BARRIER_PROGRESS_EVERY - 1)) == 0) {
		int rc = ibc_xport_progress(b->x);

		if (rc)
			return rc;
	}
	/* the clock is read rarely: every 64 polls once yielding, every 4096 spinning */
	if ((w->polls & ((b->x->wait == IBC_WAIT_SPIN_YIELD &&
			  w->polls > 64) ? 63 : 4095)) == 0) {
		int64_t now = ibc_timer_mono_ns();

		if (ibc_wait_aborted())
			return IBC_ERR_INTERRUPTED; /* another rank failed: the job ends */
		if (w->start_ns == 0)
			w->start_ns = now;
		else if (now - w->start_ns > b->deadline_ns) {
			ibc_error("barrier %s rank %d: barrier %llu: no %s from rank %d after %g s",
				  b->alg->name, b->rank, (unsigned long long)b->id, what, peer,
				  b->params.deadline_s);
			return IBC_ERR_TIMEOUT;
		}
	}
	return IBC_OK;
}

/* ------------------------------------------------------ send side ------- */

static int send_side_setup(struct ibc_barrier *b)
{
	struct ibc_xport *x = b->x;
	int rc;

	b->inline_ok = x->caps.max_inline >= 16;
	/* the queue to a peer is shared by every instance on x, so the count of
	 * unsignaled posts is too (verbs frees send slots only on completions) */
	b->sig_every = x->caps.max_send_wr > 8 ? x->caps.max_send_wr / 4 : 1;
	rc = shared_attach(b); /* sets b->pool and b->unsig */
	if (rc)
		return rc;
	if (!b->inline_ok) {
		/* each post gets its own source word until the barrier drains */
		b->nsrc = 8 * (size_t)(ibc_pattern_log2_ceil(b->size) + 2) + 16;
		rc = ibc_xport_mr_alloc(x, b->nsrc * 8, IBC_XPORT_ACCESS_ALL, &b->src_mr);
		if (rc) {
			ibc_error("barrier %s: registering %zu source bytes: %s", b->alg->name,
				  b->nsrc * 8, ibc_status_str(rc));
			return rc;
		}
		b->src = b->src_mr->addr;
	}
	return IBC_OK;
}

/* Fills sge with the payload (nwords 64-bit words: inline, or fresh source
 * words kept until the barrier drains) and the flags. */
static int source_prepare(struct ibc_barrier *b, int peer, uint64_t *payload, size_t nwords,
			  struct ibc_xport_sge *sge, unsigned *flags)
{
	size_t i;

	*flags = 0;
	sge->len = (uint32_t)(nwords * 8);
	if (b->inline_ok) {
		sge->addr = (uint64_t)(uintptr_t)payload;
		sge->lkey = 0;
		*flags = IBC_XPORT_WR_INLINE;
		if (++b->unsig[peer] >= b->sig_every) {
			b->unsig[peer] = 0;
			*flags |= IBC_XPORT_WR_SIGNALED;
			b->outstanding++;
		}
		return IBC_OK;
	}
	if (b->src_used + nwords > b->nsrc) {
		int rc = ibc_barrier_drain(b);

		if (rc)
			return rc;
	}
	for (i = 0; i < nwords; i++)
		b->src[b->src_used + i] = payload[i];
	sge->addr = (uint64_t)(uintptr_t)&b->src[b->src_used];
	sge->lkey = b->src_mr->lkey;
	b->src_used += nwords;
	*flags = IBC_XPORT_WR_SIGNALED;
	b->outstanding++;
	return IBC_OK;
}

int ibc_barrier_drain(struct ibc_barrier *b)
{
	struct ibc_barrier_waiter w;
	int rc;

	ibc_barrier_waiter_init(&w);
	while (b->outstanding > 0) {
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
		if (rc)
			return rc;
		if (b->outstanding == 0)
			break;
		rc = ibc_barrier_waiter_tick(b, &w, "send completion", b->rank);
		if (rc)
			return rc;
	}
	b->src_used = 0;
	return IBC_OK;
}

/* ------------------------------------------------------ RDMA words ------ */

int ibc_barrier_words_setup(struct ibc_barrier *b, size_t nwords, const uint8_t *want)
{
	struct ibc_xport *x = b->x;
	int rc;

	rc = send_side_setup(b);
	if (rc)
		return rc;
	b->nwords = nwords;
	rc = ibc_xport_mr_alloc(x, nwords * 8, IBC_XPORT_ACCESS_ALL, &b->mr);
	if (rc) {
		ibc_error("barrier %s: registering %zu bytes of slots: %s", b->alg->name,
			  nwords * 8, ibc_status_str(rc));
		return rc;
	}
	b->words = b->mr->addr;
	b->rdesc = calloc((size_t)b->size, sizeof(*b->rdesc));
	if (!b->rdesc)
		return IBC_ERR_NOMEM;
	rc = ibc_xport_rdesc_allgather(x, &b->mr->rdesc, b->rdesc);
	if (rc) {
		ibc_error("barrier %s: exchanging slot descriptors: %s", b->alg->name,
			  ibc_status_str(rc));
		return rc;
	}
	rc = ibc_xport_connect(x, want);
	if (rc) {
		ibc_error("barrier %s: connecting: %s", b->alg->name, ibc_status_str(rc));
		return rc;
	}
	return IBC_OK;
}

int ibc_barrier_words_put(struct ibc_barrier *b, int peer, size_t index, uint64_t value)
{
	struct ibc_xport_sge sge;
	uint64_t v = value;
	unsigned flags;
	int rc;

	rc = source_prepare(b, peer, &v, 1, &sge, &flags);
	if (rc)
		return rc;
	rc = ibc_xport_write(b->x, peer, &sge, 1, b->rdesc[peer].addr + index * 8,
			     b->rdesc[peer].rkey, flags,
			     ibc_barrier_wrid_make(b, IBC_BARRIER_WR_SIGNALED, 0));
	if (rc == IBC_ERR_AGAIN) {
		/* send queue full: reap completions and retry */
		struct ibc_barrier_waiter w;

		ibc_barrier_waiter_init(&w);
		while (rc == IBC_ERR_AGAIN) {
			int rc2 = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);

			if (rc2)
				return rc2;
			rc2 = ibc_barrier_waiter_tick(b, &w, "send queue space", peer);
			if (rc2)
				return rc2;
			rc = ibc_xport_write(b->x, peer, &sge, 1, b->rdesc[peer].addr + index * 8,
					     b->rdesc[peer].rkey, flags,
					     ibc_barrier_wrid_make(b, IBC_BARRIER_WR_SIGNALED, 0));
		}
	}
	if (rc) {
		ibc_error("barrier %s rank %d: RDMA write to rank %d: %s", b->alg->name, b->rank,
			  peer, ibc_status_str(rc));
		return rc;
	}
	return IBC_OK;
}

int ibc_barrier_words_wait(struct ibc_barrier *b, size_t index, uint64_t value, int peer)
{
	int rc;

	rc = ibc_xport_wait_u64(b->x, &b->words[index], value, b->deadline_ns, NULL);
	if (rc == IBC_ERR_TIMEOUT) {
		/* an error completion explains a missing write better than a timeout */
		int rc2 = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);

		if (rc2)
			return rc2;
		ibc_error("barrier %s rank %d: barrier %llu: no signal from rank %d after %g s",
			  b->alg->name, b->rank, (unsigned long long)value, peer,
			  b->params.deadline_s);
	} else if (rc) {
		ibc_error("barrier %s rank %d: waiting for rank %d: %s", b->alg->name, b->rank,
			  peer, ibc_status_str(rc));
	}
	return rc;
}

/* ------------------------------------------------------- two-sided ------ */

/* State shared by every barrier instance on one transport (attached at
 * setup, detached at destroy; both collective):
 *  - the count of unsignaled posts per peer: instances share the transport's
 *    send queue to a peer, and at least one post in every max_send_wr must
 *    be signaled, whoever posted them;
 *  - the two-sided receive pool below.
 *
 * Two-sided barrier instances on one transport share its per-peer receive
 * queues, and a message lands in the next buffer posted for its sender,
 * whoever posted it.  So the receive buffers belong to one pool per
 * transport, shared by every two-sided instance on it: each message carries
 * the tag of the instance it is for (tags are handed out at the collective
 * setup, so they agree across ranks) and its completion is routed by that
 * tag.  A posted buffer cannot be taken back from a queue; when the last
 * instance leaves (collective, nothing in flight: every message of a barrier
 * is waited for), every rank sends each peer exactly as many "drain"
 * messages as that peer has buffers posted for it, so the queues are empty
 * before the memory is deregistered. */
#define POOL_MAX 16
#define POOL_DEPTH 4      /* per source: a peer is at most one barrier ahead */
#define POOL_TAGS 64
#define POOL_DRAIN_TAG UINT64_MAX

struct ibc_barrier_pool {
	struct ibc_xport *x;
	int index, size, refs;
	uint32_t *unsig;               /* [size]: posts since the last signaled one */
	uint32_t next_tag;
	uint8_t *posted;               /* [size]: sources with POOL_DEPTH buffers posted */
	struct ibc_xport_mr *mr;       /* size * POOL_DEPTH slots of 16 bytes (lazy) */
	struct ibc_barrier *by_tag[POOL_TAGS];
	int draining;
	uint64_t drained;
};

static struct ibc_barrier_pool *pools[POOL_MAX];

static uint64_t pool_wrid(const struct ibc_barrier_pool *p, uint32_t slot)
{
	return (IBC_BARRIER_WRID_TAG << 56) |
	       ((uint64_t)(IBC_BARRIER_WRID_POOL | (unsigned)p->index) << 40) |
	       ((uint64_t)IBC_BARRIER_WR_P2P_RECV << 32) | slot;
}

static int pool_post(struct ibc_barrier_pool *p, uint32_t slot)
{
	struct ibc_xport_sge sge = {
		.addr = (uint64_t)(uintptr_t)p->mr->addr + (uint64_t)slot * 16,
		.len = 16, .lkey = p->mr->lkey };
	int src = (int)(slot / POOL_DEPTH), rc;

	rc = ibc_xport_recv(p->x, src, NULL, &sge, 1, pool_wrid(p, slot));
	if (rc)
		ibc_error("barrier: posting a receive from rank %d: %s", src, ibc_status_str(rc));
	return rc;
}

void ibc_barrier_pool_wc(unsigned pool_index, const struct ibc_xport_wc *wc, uint32_t slot)
{
	struct ibc_barrier_pool *p = pool_index < POOL_MAX ? pools[pool_index] : NULL;
	const uint64_t *buf;
	struct ibc_barrier *o;
	uint64_t tag, v;
	int src;

	if (!p || slot >= (uint32_t)(p->size * POOL_DEPTH) || wc->status != IBC_OK)
		return;
	buf = (const uint64_t *)p->mr->addr + (size_t)slot * 2;
	src = (int)(slot / POOL_DEPTH);
	if (wc->byte_len != 16) {
		ibc_warn("barrier: a %u-byte message from rank %d ignored", wc->byte_len, src);
		(void)pool_post(p, slot);
		return;
	}
	tag = buf[0];
	v = buf[1];
	if (tag == POOL_DRAIN_TAG) {
		p->drained++;
		return; /* not reposted: the queue empties */
	}
	o = tag < POOL_TAGS ? p->by_tag[tag] : NULL;
	if (o && o->got) {
		if (v > o->got[src])
			o->got[src] = v;
	} else {
		ibc_warn("barrier: a message from rank %d for unknown instance %llu ignored", src,
			 (unsigned long long)tag);
	}
	if (pool_post(p, slot) != IBC_OK && o && !o->failed)
		o->failed = IBC_ERR_SYS;
}

static int shared_attach(struct ibc_barrier *b)
{
	struct ibc_barrier_pool *p = NULL;
	int i, free_idx = -1;

	for (i = 0; i < POOL_MAX && !p; i++) {
		if (pools[i] && pools[i]->x == b->x)
			p = pools[i];
		else if (!pools[i] && free_idx < 0)
			free_idx = i;
	}
	if (!p) {
		if (free_idx < 0) {
			ibc_error("barrier: more than %d transports with barriers", POOL_MAX);
			return IBC_ERR_NOMEM;
		}
		p = calloc(1, sizeof(*p));
		if (!p)
			return IBC_ERR_NOMEM;
		p->posted = calloc((size_t)b->size, 1);
		p->unsig = calloc((size_t)b->size, sizeof(*p->unsig));
		if (!p->posted || !p->unsig) {
			free(p->posted);
			free(p->unsig);
			free(p);
			return IBC_ERR_NOMEM;
		}
		p->x = b->x;
		p->size = b->size;
		p->index = free_idx;
		pools[free_idx] = p;
	}
	p->refs++;
	b->pool = p;
	b->unsig = p->unsig;
	return IBC_OK;
}

static void pool_free(struct ibc_barrier_pool *p)
{
	pools[p->index] = NULL;
	if (p->mr)
		(void)ibc_xport_mr_dereg(p->x, p->mr);
	free(p->posted);
	free(p->unsig);
	free(p);
}

int ibc_barrier_p2p_setup(struct ibc_barrier *b, const uint8_t *want, const uint8_t *is_source)
{
	struct ibc_xport *x = b->x;
	struct ibc_barrier_pool *p;
	int r, d, rc;

	rc = send_side_setup(b);
	if (rc)
		return rc;
	b->got = calloc((size_t)b->size, sizeof(*b->got));
	if (!b->got)
		return IBC_ERR_NOMEM;
	rc = ibc_xport_connect(x, want);
	if (rc) {
		ibc_error("barrier %s: connecting: %s", b->alg->name, ibc_status_str(rc));
		return rc;
	}
	p = b->pool;
	if (!p->mr) {
		rc = ibc_xport_mr_alloc(x, (size_t)b->size * POOL_DEPTH * 16, IBC_XPORT_ACCESS_ALL,
					&p->mr);
		if (rc) {
			ibc_error("barrier: registering receive buffers: %s", ibc_status_str(rc));
			return rc;
		}
	}
	if (p->next_tag >= POOL_TAGS) {
		ibc_error("barrier %s: more than %d two-sided instances on one transport",
			  b->alg->name, POOL_TAGS);
		return IBC_ERR_NOMEM;
	}
	b->p2p_tag = p->next_tag++;
	b->p2p_tagged = 1;
	p->by_tag[b->p2p_tag] = b;
	for (r = 0; r < b->size; r++) {
		if (!is_source[r] || p->posted[r])
			continue;
		for (d = 0; d < POOL_DEPTH; d++) {
			rc = pool_post(p, (uint32_t)(r * POOL_DEPTH + d));
			if (rc)
				return rc;
		}
		p->posted[r] = 1;
	}
	/* receives are posted everywhere before anyone sends */
	rc = ibc_boot_barrier(x->boot);
	if (rc)
		ibc_error("barrier %s: bootstrap barrier after setup: %s", b->alg->name,
			  ibc_status_str(rc));
	return rc;
}

static int p2p_post(struct ibc_barrier *b, int peer, uint64_t tag, uint64_t value)
{
	struct ibc_xport_sge sge;
	struct ibc_barrier_waiter w;
	uint64_t payload[2] = { tag, value };
	unsigned flags;
	int rc;

	rc = source_prepare(b, peer, payload, 2, &sge, &flags);
	if (rc)
		return rc;
	ibc_barrier_waiter_init(&w);
	for (;;) {
		rc = ibc_xport_send(b->x, peer, &sge, 1, flags,
				    ibc_barrier_wrid_make(b, IBC_BARRIER_WR_SIGNALED, 0));
		if (rc != IBC_ERR_AGAIN)
			break;
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_ANY);
		if (rc)
			return rc;
		rc = ibc_barrier_waiter_tick(b, &w, "send queue space", peer);
		if (rc)
			return rc;
	}
	if (rc)
		ibc_error("barrier %s rank %d: send to rank %d: %s", b->alg->name, b->rank, peer,
			  ibc_status_str(rc));
	return rc;
}

int ibc_barrier_p2p_send(struct ibc_barrier *b, int peer, uint64_t value)
{
	return p2p_post(b, peer, b->p2p_tag, value);
}

int ibc_barrier_p2p_wait(struct ibc_barrier *b, int peer, uint64_t value)
{
	struct ibc_barrier_waiter w;
	int rc;

	ibc_barrier_waiter_init(&w);
	while (b->got[peer] < value) {
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_RECV);
		if (rc)
			return rc;
		if (b->got[peer] >= value)
			break;
		if ((w.polls & 15) == 15) {
			rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
			if (rc)
				return rc;
		}
		rc = ibc_barrier_waiter_tick(b, &w, "message", peer);
		if (rc)
			return rc;
	}
	return IBC_OK;
}

int ibc_barrier_shared_detach(struct ibc_barrier *b)
{
	struct ibc_barrier_pool *p = b->pool;
	struct ibc_barrier_waiter w;
	int *mine = NULL, *all = NULL, r, k, rc, any = 0;
	uint64_t expect = 0;

	if (!p)
		return IBC_OK;
	if (b->p2p_tagged)
		p->by_tag[b->p2p_tag] = NULL;
	b->p2p_tagged = 0;
	if (--p->refs > 0) {
		b->pool = NULL;
		b->unsig = NULL;
		return IBC_OK;
	}
	/* the last one: empty every queue, then free */
	mine = calloc((size_t)b->size, sizeof(*mine));
	all = calloc((size_t)b->size * (size_t)b->size, sizeof(*all));
	if (!mine || !all) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	for (r = 0; r < b->size; r++) {
		mine[r] = p->posted[r] ? POOL_DEPTH : 0;
		expect += (uint64_t)mine[r];
	}
	rc = ibc_boot_allgather(b->x->boot, mine, all, (size_t)b->size * sizeof(*mine));
	if (rc) {
		ibc_error("barrier: exchanging receive counts: %s", ibc_status_str(rc));
		goto out_free;
	}
	for (r = 0; r < b->size * b->size; r++)
		any |= all[r] != 0;
	if (!any)
		goto out_free_pool; /* no two-sided instance ever posted */
	p->draining = 1;
	for (r = 0; r < b->size && rc == IBC_OK; r++)
		for (k = 0; k < all[(size_t)r * (size_t)b->size + (size_t)b->rank] && rc == IBC_OK; k++)
			rc = p2p_post(b, r, POOL_DRAIN_TAG, 0);
	ibc_barrier_waiter_init(&w);
	while (rc == IBC_OK && p->drained < expect) {
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_ANY);
		if (rc == IBC_OK && p->drained < expect)
			rc = ibc_barrier_waiter_tick(b, &w, "drain message", -1);
	}
	if (rc == IBC_OK)
		rc = ibc_barrier_drain(b);
out_free_pool:
	b->pool = NULL;
	b->unsig = NULL;
	if (rc == IBC_OK)
		pool_free(p); /* on failure the pool stays: its buffers may still be posted */
out_free:
	free(mine);
	free(all);
	return rc;
}

/* ------------------------------------------------------- step loops ----- */

void ibc_barrier_steps_peers(const struct ibc_barrier *b, int nsteps, ibc_barrier_step_fn fn,
			     uint8_t *want, uint8_t *is_source)
{
	int s;

	for (s = 0; s < nsteps; s++) {
		struct ibc_pattern_step st;

		if (fn(b->size, b->rank, s, &st))
			continue;
		if (st.send_to >= 0 && want)
			want[st.send_to] = 1;
		if (st.recv_from >= 0) {
			if (want)
				want[st.recv_from] = 1;
			if (is_source)
				is_source[st.recv_from] = 1;
		}
	}
}

const struct ibc_barrier_tunable ibc_barrier_tunables_steps[] = {
	{ "deadline", "60", "seconds before a wait gives up (IBC_ERR_TIMEOUT)" },
	{ NULL, NULL, NULL }
};

int ibc_barrier_steps_setup(struct ibc_barrier *b, int nsteps, ibc_barrier_step_fn fn,
			    int two_sided)
{
	uint8_t *want, *is_source;
	int rc;

	want = calloc((size_t)b->size, 1);
	is_source = calloc((size_t)b->size, 1);
	if (!want || !is_source) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	ibc_barrier_steps_peers(b, nsteps, fn, want, is_source);
	/* RDMA: slot i is written by rank i (§4.1), N words */
	rc = two_sided ? ibc_barrier_p2p_setup(b, want, is_source)
		       : ibc_barrier_words_setup(b, (size_t)b->size, want);
out_free:
	free(want);
	free(is_source);
	return rc;
}

int ibc_barrier_steps_rdma(struct ibc_barrier *b, uint64_t id, int nsteps, ibc_barrier_step_fn fn)
{
	int s, rc;

	/* reap periodic signaled completions (and notice error completions) */
	rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
	if (rc)
		return rc;
	for (s = 0; s < nsteps; s++) {
		struct ibc_pattern_step st;

		rc = fn(b->size, b->rank, s, &st);
		if (rc)
			return rc;
		if (st.send_to >= 0) {
			rc = ibc_barrier_words_put(b, st.send_to, (size_t)b->rank, id);
			if (rc)
				return rc;
		}
		if (st.recv_from >= 0) {
			rc = ibc_barrier_words_wait(b, (size_t)st.recv_from, id, st.recv_from);
			if (rc)
				return rc;
		}
	}
	return b->inline_ok ? IBC_OK : ibc_barrier_drain(b);
}

int ibc_barrier_steps_p2p(struct ibc_barrier *b, uint64_t id, int nsteps, ibc_barrier_step_fn fn)
{
	int s, rc;

	for (s = 0; s < nsteps; s++) {
		struct ibc_pattern_step st;

		rc = fn(b->size, b->rank, s, &st);
		if (rc)
			return rc;
		if (st.send_to >= 0) {
			rc = ibc_barrier_p2p_send(b, st.send_to, id);
			if (rc)
				return rc;
		}
		if (st.recv_from >= 0) {
			rc = ibc_barrier_p2p_wait(b, st.recv_from, id);
			if (rc)
				return rc;
		}
	}
	return b->inline_ok ? IBC_OK : ibc_barrier_drain(b);
}

void ibc_barrier_common_free(struct ibc_barrier *b)
{
	if (b->mr)
		(void)ibc_xport_mr_dereg(b->x, b->mr);
	if (b->src_mr)
		(void)ibc_xport_mr_dereg(b->x, b->src_mr);
	b->mr = b->src_mr = NULL;
	free(b->rdesc);
	free(b->got);
	b->rdesc = NULL;
	b->unsig = NULL; /* the shared state's */
	b->got = NULL;
}
