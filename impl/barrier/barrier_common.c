/* Plumbing shared by the barrier algorithms: RDMA words (§4.1-4.2), two-sided
 * messages, waiting with the process's strategy, and the step loops. */
#include "barrier/barrier_impl.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "family/family_recv.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define BARRIER_PROGRESS_EVERY 64 /* polls between progress calls (a power of 2) */

static int shared_attach(struct ibc_barrier *b);

void ibc_barrier_waiter_init(const struct ibc_barrier *b, struct ibc_barrier_waiter *w)
{
	w->f = IBC_FAMILY_WAITER(b->deadline_ns, 0, BARRIER_PROGRESS_EVERY);
}

/* ------------------------------------------------ completion routing -- */

int ibc_barrier_wc(void *owner, const struct ibc_xport_wc *wc, unsigned kind, uint32_t index)
{
	struct ibc_barrier *o = owner;

	if (wc->status != IBC_OK) {
		if (!o->failed) {
			ibc_error("barrier %s rank %d: %s to/from rank %d failed: %s", o->alg->name,
				  o->rank, ibc_xport_opcode_name(wc->opcode), wc->peer,
				  wc->reason ? wc->reason : "?");
			o->failed = wc->status < 0 ? wc->status : IBC_ERR_REMOTE;
		}
		return IBC_OK;
	}
	if (kind == IBC_BARRIER_WR_SIGNALED) {
		if (o->outstanding > 0)
			o->outstanding--;
	} else if (o->wc_hook) {
		o->wc_hook(o, wc, kind, index);
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
	rc = shared_attach(b); /* sets b->shared and b->unsig */
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

	ibc_barrier_waiter_init(b, &w);
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

		ibc_barrier_waiter_init(b, &w);
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
 * setup, detached at destroy): the count of unsignaled posts per peer.
 * Instances share the transport's send queue to a peer, and at least one
 * post in every max_send_wr must be signaled, whoever posted them.
 *
 * Two-sided instances (pe, ds) receive through the transport's receive
 * pool (family_recv.h), shared with every two-sided instance on it, of any
 * family: a message is 16 bytes, the pool's header (this instance's tag)
 * and the barrier id. */
#define SHARED_MAX 16

struct ibc_barrier_shared {
	struct ibc_xport *x;
	int refs;
	uint32_t *unsig;               /* [size]: posts since the last signaled one */
};

static struct ibc_barrier_shared *shared[SHARED_MAX];

static int shared_attach(struct ibc_barrier *b)
{
	struct ibc_barrier_shared *p = NULL;
	int i, free_idx = -1;

	for (i = 0; i < SHARED_MAX && !p; i++) {
		if (shared[i] && shared[i]->x == b->x)
			p = shared[i];
		else if (!shared[i] && free_idx < 0)
			free_idx = i;
	}
	if (!p) {
		if (free_idx < 0) {
			ibc_error("barrier: more than %d transports with barriers", SHARED_MAX);
			return IBC_ERR_NOMEM;
		}
		p = calloc(1, sizeof(*p));
		if (!p)
			return IBC_ERR_NOMEM;
		p->unsig = calloc((size_t)b->size, sizeof(*p->unsig));
		if (!p->unsig) {
			free(p);
			return IBC_ERR_NOMEM;
		}
		p->x = b->x;
		shared[free_idx] = p;
	}
	p->refs++;
	b->shared = p;
	b->unsig = p->unsig;
	return IBC_OK;
}

struct p2p_msg {
	struct ibc_family_recv_hdr h;
	uint64_t value;
};

/* A message of the pool for o: the highest id from each peer. */
static int p2p_recv(void *owner, int peer, int k, const void *msg, uint32_t len)
{
	struct ibc_barrier *o = owner;
	const struct p2p_msg *m = msg;

	(void)k;
	if (len != sizeof(*m)) {
		ibc_warn("barrier: a %u-byte message from rank %d ignored", len, peer);
		return 0;
	}
	if (o->got && m->value > o->got[peer])
		o->got[peer] = m->value;
	return 0; /* read: the slot is posted again */
}

int ibc_barrier_p2p_setup(struct ibc_barrier *b, const uint8_t *want, const uint8_t *is_source)
{
	struct ibc_xport *x = b->x;
	int rc;

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
	rc = ibc_family_recv_join(x, sizeof(struct p2p_msg), is_source, p2p_recv, b, &b->rpool,
				  &b->p2p_tag);
	if (b->rpool)
		b->p2p_tagged = 1;
	if (rc) {
		ibc_error("barrier %s: joining the receive pool: %s", b->alg->name,
			  ibc_status_str(rc));
		return rc;
	}
	/* receives are posted everywhere before anyone sends */
	rc = ibc_boot_barrier(x->boot);
	if (rc)
		ibc_error("barrier %s: bootstrap barrier after setup: %s", b->alg->name,
			  ibc_status_str(rc));
	return rc;
}

int ibc_barrier_p2p_send(struct ibc_barrier *b, int peer, uint64_t value)
{
	struct ibc_xport_sge sge;
	struct ibc_barrier_waiter w;
	struct p2p_msg m = { { b->p2p_tag, 0 }, value };
	uint64_t payload[2];
	unsigned flags;
	int rc;

	memcpy(payload, &m, sizeof(payload));
	rc = source_prepare(b, peer, payload, 2, &sge, &flags);
	if (rc)
		return rc;
	ibc_barrier_waiter_init(b, &w);
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

int ibc_barrier_p2p_wait(struct ibc_barrier *b, int peer, uint64_t value)
{
	struct ibc_barrier_waiter w;
	int rc;

	ibc_barrier_waiter_init(b, &w);
	while (b->got[peer] < value) {
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_RECV);
		if (rc)
			return rc;
		if (b->got[peer] >= value)
			break;
		if ((w.f.polls & 15) == 15) {
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
	struct ibc_barrier_shared *p = b->shared;
	int i, rc = IBC_OK;

	if (b->p2p_tagged) {
		/* the last two-sided instance on x drains the pool's queues */
		rc = ibc_family_recv_leave(b->rpool, b->p2p_tag, b->failed == IBC_OK,
					   b->deadline_ns);
		if (rc == IBC_OK && !b->inline_ok)
			rc = ibc_barrier_drain(b);
		b->p2p_tagged = 0;
		b->rpool = NULL;
	}
	if (!p)
		return rc;
	b->shared = NULL;
	b->unsig = NULL;
	if (--p->refs > 0)
		return rc;
	for (i = 0; i < SHARED_MAX; i++)
		if (shared[i] == p)
			shared[i] = NULL;
	free(p->unsig);
	free(p);
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
