/* Internals shared by barrier.c, barrier_common.c and the algorithm files.
 * Not for use outside impl/barrier/. */
#ifndef IBC_BARRIER_IMPL_H
#define IBC_BARRIER_IMPL_H

#include "barrier/barrier.h"
#include "core/status.h"
#include "family/family.h"
#include "pattern/pattern.h"
#include "xport/xport.h"

#include <stdint.h>

/* wr_id kinds (the layout: family.h) */
enum ibc_barrier_wr_kind {
	IBC_BARRIER_WR_SIGNALED = 1, /* a signaled write/send of the common code */
	IBC_BARRIER_WR_ALG = 3       /* first kind owned by the algorithm (wc hook) */
};

extern struct ibc_family_kind ibc_barrier_family_kind;
struct ibc_family_recv;

/* How a step-structured algorithm signals and waits. */
typedef int (*ibc_barrier_step_fn)(int n, int rank, int step, struct ibc_pattern_step *out);

struct ibc_barrier {
	const struct ibc_barrier_alg *alg;
	struct ibc_xport *x;
	struct ibc_barrier_params params;
	int fanin;                 /* resolved (RGM) */
	int rank, size;
	uint64_t id;               /* id of the last barrier started */
	int ready;                 /* setup done */
	int failed;                /* sticky error status (an error completion) */
	struct ibc_family_member fm; /* registry index (family.h) */
	int64_t deadline_ns;
	struct ibc_barrier_counters cnt;
	/* completions of algorithm-owned kinds (>= IBC_BARRIER_WR_ALG) */
	void (*wc_hook)(struct ibc_barrier *b, const struct ibc_xport_wc *wc, unsigned kind,
			uint32_t index);

	/* RDMA words (rpe, rds, rgm): nwords 64-bit words, peers' descriptors */
	struct ibc_xport_mr *mr;
	uint64_t *words;
	size_t nwords;
	struct ibc_xport_rdesc *rdesc;   /* [size] */
	/* source of non-inline writes/sends: one word per post until drained */
	struct ibc_xport_mr *src_mr;
	uint64_t *src;
	size_t nsrc, src_used;
	int inline_ok;
	uint32_t *unsig;                 /* [size] posts since the last signaled one
					    (shared by the instances on x) */
	uint32_t sig_every;
	int outstanding;                 /* signaled posts not completed yet */

	/* state shared by the barrier instances on x (see barrier_common.c):
	 * unsignaled counts */
	struct ibc_barrier_shared *shared;
	/* two-sided ones (pe, ds): the transport's receive pool (family_recv.h) */
	struct ibc_family_recv *rpool;
	uint32_t p2p_tag;                /* this instance's tag in the pool's messages */
	int p2p_tagged;
	uint64_t *got;                   /* [size]: highest id received from each peer */

	void *priv;                      /* algorithm state (alg->priv_size bytes) */
};

static inline uint64_t ibc_barrier_wrid_make(const struct ibc_barrier *b, unsigned kind,
					     uint32_t index)
{
	return ibc_family_wrid(&b->fm, kind, index);
}

/* A completion of one of b's WRs (the router's handler, family.h). */
int ibc_barrier_wc(void *owner, const struct ibc_xport_wc *wc, unsigned kind, uint32_t index);
/* Polls cq once (non-blocking, up to a batch) and hands each completion to
 * the instance that owns it, whatever its family.  Returns a poll or
 * receive error (logged), else b->failed. */
static inline int ibc_barrier_cq_service(struct ibc_barrier *b, int cq)
{
	int rc = ibc_family_service(b->x, cq);

	return rc ? rc : b->failed;
}

/* Waiting helper: spin, or spin then yield, per x->wait; IBC_ERR_TIMEOUT
 * (logged with what) after the deadline. */
struct ibc_barrier_waiter {
	struct ibc_family_waiter f;
};
void ibc_barrier_waiter_init(const struct ibc_barrier *b, struct ibc_barrier_waiter *w);
static inline int ibc_barrier_waiter_tick(struct ibc_barrier *b, struct ibc_barrier_waiter *w,
					  const char *what, int peer)
{
	int rc = ibc_family_tick(b->x, &w->f);

	if (rc == IBC_ERR_TIMEOUT)
		rc = ibc_family_timeout("barrier", b->alg->name, b->rank, "barrier",
					(unsigned long long)b->id, what, peer,
					b->params.deadline_s);
	return rc;
}

/* RDMA words: allocates nwords words (zero), exchanges descriptors,
 * connects the peers in want (NULL = all).  Collective. */
int ibc_barrier_words_setup(struct ibc_barrier *b, size_t nwords, const uint8_t *want);
/* Writes value into word index of peer (ordered after earlier writes to the
 * same peer). */
int ibc_barrier_words_put(struct ibc_barrier *b, int peer, size_t index, uint64_t value);
/* Waits for local word index >= value. */
int ibc_barrier_words_wait(struct ibc_barrier *b, size_t index, uint64_t value, int peer);
/* Waits until every signaled post has completed (non-inline path). */
int ibc_barrier_drain(struct ibc_barrier *b);

/* Two-sided: joins the transport's receive pool (posting buffers for new
 * sources) and sets up the send side.  Collective. */
int ibc_barrier_p2p_setup(struct ibc_barrier *b, const uint8_t *want, const uint8_t *is_source);
/* Leaves the receive pool (the last two-sided instance of any family on the
 * transport drains and frees it) and the shared state.  Collective (called
 * by ibc_barrier_destroy). */
int ibc_barrier_shared_detach(struct ibc_barrier *b);
int ibc_barrier_p2p_send(struct ibc_barrier *b, int peer, uint64_t value);
int ibc_barrier_p2p_wait(struct ibc_barrier *b, int peer, uint64_t value);

/* Setup of a step schedule: the peers it talks to, then the RDMA slots
 * (rpe/rds) or the two-sided receive pool (pe/ds).  Collective. */
int ibc_barrier_steps_setup(struct ibc_barrier *b, int nsteps, ibc_barrier_step_fn fn,
			    int two_sided);
/* The tunables of the step schedules (rpe, rds, pe, ds). */
extern const struct ibc_barrier_tunable ibc_barrier_tunables_steps[];
/* Step loops of rpe/rds (RDMA words, word = sender's rank) and pe/ds. */
int ibc_barrier_steps_rdma(struct ibc_barrier *b, uint64_t id, int nsteps, ibc_barrier_step_fn fn);
int ibc_barrier_steps_p2p(struct ibc_barrier *b, uint64_t id, int nsteps, ibc_barrier_step_fn fn);
/* The peers a schedule talks to: want[r] = 1 when r is sent to or received
 * from; is_source[r] = 1 when received from (either may be NULL). */
void ibc_barrier_steps_peers(const struct ibc_barrier *b, int nsteps, ibc_barrier_step_fn fn,
			     uint8_t *want, uint8_t *is_source);

/* Frees what the common setups allocated (not collective). */
void ibc_barrier_common_free(struct ibc_barrier *b);

extern const struct ibc_barrier_alg ibc_barrier_alg_rpe;
extern const struct ibc_barrier_alg ibc_barrier_alg_rds;
extern const struct ibc_barrier_alg ibc_barrier_alg_rgm;
extern const struct ibc_barrier_alg ibc_barrier_alg_pe;
extern const struct ibc_barrier_alg ibc_barrier_alg_ds;

#endif
