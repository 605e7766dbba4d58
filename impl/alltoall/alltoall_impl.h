/* Internals shared by the files of impl/alltoall/.  Not for use elsewhere. */
#ifndef IBC_ALLTOALL_IMPL_H
#define IBC_ALLTOALL_IMPL_H

#include "alltoall/alltoall.h"
#include "core/status.h"
#include "core/wait.h"
#include "family/family.h"
#include "pattern/pattern.h"
#include "xport/xport.h"

#include <stdint.h>

/* wr_id kinds (family.h): an instance's, and its two-sided part's */
enum a2a_wr_kind {
	A2A_WR_SIGNALED = 1,  /* a signaled WR of an instance: outstanding-- */
	A2A_WR_SEND_SLOT = 2  /* a two-sided message's send slot (index) is free again */
};

extern struct ibc_family_kind a2a_family_kind;

struct a2a_p2p;   /* alltoall_p2p.c */

struct ibc_alltoall {
	const struct ibc_alltoall_alg *alg;
	struct ibc_xport *x;
	struct ibc_alltoall_params params;
	int rank, size;
	uint64_t seq;              /* calls started: 1, 2, ... */
	int ready, failed;
	struct ibc_family_member fm;
	int64_t deadline_ns;
	struct ibc_alltoall_counters cnt;
	struct ibc_regcache *rc;
	int rc_own;
	int outstanding;           /* signaled WRs not completed */
	unsigned jitter_state;
	struct a2a_p2p *p2p;       /* two-sided algorithms */
	void *priv;                /* the algorithm's */
};

static inline uint64_t a2a_wrid(const struct ibc_alltoall *a, unsigned kind, uint32_t index)
{
	return ibc_family_wrid(&a->fm, kind, index);
}

/* Polls the completion queues once and routes what it finds, whatever its
 * family (a poll or pool error, else a->failed). */
static inline int a2a_service(struct ibc_alltoall *a)
{
	int rc = ibc_family_service(a->x, IBC_XPORT_CQ_ANY);

	return rc ? rc : a->failed;
}
/* An error completion of a: logged once, a->failed. */
void a2a_wc_failed(struct ibc_alltoall *a, const struct ibc_xport_wc *wc);

/* A wait loop's tick: relax per x->wait, every 16 polls service completions
 * and the transport's progress, check the deadline and the job's abort. */
struct a2a_waiter {
	struct ibc_family_waiter f;      /* deadline from a->deadline_ns at the first check */
};
#define A2A_WAITER(a) ((struct a2a_waiter){ IBC_FAMILY_WAITER((a)->deadline_ns, 16, 16) })
static inline int a2a_tick(struct ibc_alltoall *a, struct a2a_waiter *w, const char *what,
			   int peer)
{
	int rc = ibc_family_tick(a->x, &w->f);

	/* an error completion routed to a in the tick's service */
	if (rc == IBC_OK && (w->f.polls & (w->f.service_every - 1)) == 0)
		rc = a->failed;
	if (rc == IBC_ERR_TIMEOUT)
		rc = ibc_family_timeout("alltoall", a->alg->name, a->rank, "call",
					(unsigned long long)a->seq, what, peer,
					a->params.deadline_s);
	return rc;
}
/* Waits until the 64-bit word at addr is >= target. */
int a2a_wait_u64(struct ibc_alltoall *a, const volatile uint64_t *addr, uint64_t target,
		 const char *what, int peer);
/* Waits until every signaled WR has completed. */
int a2a_drain(struct ibc_alltoall *a);
/* The tests' random delay before a step (params.jitter_us). */
void a2a_jitter(struct ibc_alltoall *a);
/* Registration through the cache (counted in a->cnt). */
int a2a_reg(struct ibc_alltoall *a, void *addr, size_t len, unsigned access,
	    struct ibc_xport_mr **mr);
void a2a_unreg(struct ibc_alltoall *a, struct ibc_xport_mr *mr);
/* memcpy, counted */
void a2a_copy(struct ibc_alltoall *a, void *dst, const void *src, size_t n);

/* Two-sided messages (alltoall_p2p.c), over the transport's receive pool
 * (family_recv.h).  The two-sided algorithms' setup and teardown call them. */
int a2a_p2p_setup(struct ibc_alltoall *a);    /* collective */
void a2a_p2p_teardown(struct ibc_alltoall *a);
/* One step of a two-sided algorithm: sends slen bytes to `to` and receives
 * rlen bytes from `from` (either may be -1), eager or rendezvous (always
 * rendezvous when force_rndz). */
int a2a_sendrecv(struct ibc_alltoall *a, int to, const void *sbuf, size_t slen, int from,
		 void *rbuf, size_t rlen, int force_rndz);

/* A combining schedule (impl/pattern) laid out once at set-up, so a call
 * only walks arrays: step s's partners, the slots that move in it (in
 * order), and each slot's send-buffer and receive-buffer block. */
struct a2a_sched {
	enum ibc_pattern_comb kind;
	int n, nsteps;
	struct ibc_pattern_step *step;  /* [nsteps] */
	int *moving;                    /* [nsteps][n]: the first nmoving[s] used */
	int *nmoving;                   /* [nsteps] */
	int *in_blk, *out_blk;          /* [n] */
};
int a2a_sched_build(struct a2a_sched *sc, enum ibc_pattern_comb kind, int n, int rank);
void a2a_sched_free(struct a2a_sched *sc);

/* The algorithms' common part: block j of sbuf to itself. */
void a2a_self_copy(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m);
/* For the cost models (alg.rounds): a call's copies around its m rounds
 * r[0..m) (pattern.h; nothing when r is NULL or m is 0 or over cap):
 * `first` of its own blocks before the first round, `last` of its own and
 * `last_peer` received ones after the last.  Returns m. */
int a2a_rounds_copies(struct ibc_pattern_round *r, int m, int cap, long first, long last,
		      long last_peer);

extern const struct ibc_alltoall_alg ibc_alltoall_alg_hrwg;
extern const struct ibc_alltoall_alg ibc_alltoall_alg_hrwg_multi;
extern const struct ibc_alltoall_alg ibc_alltoall_alg_de;
extern const struct ibc_alltoall_alg ibc_alltoall_alg_hypercube;
extern const struct ibc_alltoall_alg ibc_alltoall_alg_bruck;
extern const struct ibc_alltoall_alg ibc_alltoall_alg_pairwise;
extern const struct ibc_alltoall_alg ibc_alltoall_alg_direct;

#endif
