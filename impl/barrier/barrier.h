/* Barrier algorithms (Kini et al., EuroPVM/MPI 2003) over the transport
 * interface (impl/xport/xport.h) only.
 *
 * One table of algorithms, UCC style: each entry has a name, a description,
 * the transport capabilities it needs and its tunables.  An algorithm added
 * to the table (barrier.c) is listed, swept and tested with no other edit.
 *
 *   rpe  RDMA pairwise exchange (MPICH recursive doubling; floor(log2 N)+2
 *        steps for non-powers of two)
 *   rds  RDMA dissemination (ceil(log2 N) rounds)
 *   rgm  RDMA gather up a k-nomial tree of maximum fan-in l, then one UD
 *        multicast release carrying the barrier id; NAK + timer reliability
 *   pe   pairwise exchange over two-sided send/receive
 *   ds   dissemination over two-sided send/receive
 *
 * Buffer management (§4.1-4.2 of the paper): an array of N 64-bit slots per
 * rank is allocated and registered at the first barrier (which is therefore
 * collective setup: registration, one descriptor allgather, connection of the
 * peers the pattern needs); each barrier takes the next value of a
 * monotonically increasing barrier id (1, 2, ...); rank i writes the id into
 * slot i of its partner; the partner waits for slot >= id, so back-to-back
 * barriers are safe without resetting anything.
 *
 * Use:
 *   struct ibc_barrier_params p;
 *   ibc_barrier_params_init(&p);  p.fanin = 3;
 *   ibc_barrier_create(xport, "rgm", &p, &b);     (checks p for xport->size)
 *   for (...) ibc_barrier_run(b);                 (collective)
 *   ibc_barrier_counters_get(b, &c);              (this rank's: RGM's NAKs ...;
 *                                                  the suite driver sums ranks)
 *   ibc_barrier_destroy(b);                       (collective)
 *
 * Several instances may share one transport (the harness interleaves
 * variants), also with instances of other families (all-to-all, channel):
 * every completion goes to the instance that owns it by wr_id, and two-sided
 * messages share the transport's receive pool (impl/family).  Instances are
 * not thread-safe.  The completion queues of a transport used by barrier
 * instances must not be polled by anyone else than impl/family's router
 * while a barrier runs; while an RGM instance lives, its root's progress
 * hook polls the send queue too (and routes what it finds to its owners). */
#ifndef IBC_BARRIER_H
#define IBC_BARRIER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ibc_xport;
struct ibc_boot;
struct ibc_barrier;
struct ibc_pattern_round;

/* What an algorithm needs from the transport. */
enum ibc_barrier_needs {
	IBC_BARRIER_NEEDS_RDMA_WRITE = 1,
	IBC_BARRIER_NEEDS_RDMA_READ = 2,
	IBC_BARRIER_NEEDS_TWO_SIDED = 4,
	IBC_BARRIER_NEEDS_MULTICAST = 8
};

/* A tunable as listed by ibc_barrier_list_print. */
struct ibc_barrier_tunable {
	const char *name;  /* e.g. "fanin" */
	const char *dflt;  /* default, as text */
	const char *help;
};

struct ibc_barrier_alg;

/* Tunables.  ibc_barrier_params_init sets the defaults. */
struct ibc_barrier_params {
	/* RGM: maximum fan-in l of the gather tree, l = 2^k - 1.  0 = default:
	 * 7, the value the paper's implementation used at every N.  l >= N - 1
	 * makes the gather flat (every rank writes to the root; see
	 * barrier_rgm.c on the paper's "l < N").  An explicit value is never
	 * adjusted. */
	int fanin;
	/* RGM: a receiver still waiting for the release after this long
	 * sends a NAK to the root, and another after each further timeout
	 * (after 8 unanswered NAKs over 400 timeouts it reads the root's
	 * release word directly); microseconds, > 0. */
	double timeout_us;
	/* Every algorithm: give up waiting after this long (IBC_ERR_TIMEOUT,
	 * with an error naming the peer waited for); seconds, > 0. */
	double deadline_s;
};

/* Counters of one rank (summed over ranks by ibc_barrier_counters_sum). */
struct ibc_barrier_counters {
	uint64_t barriers;     /* barriers completed */
	uint64_t naks;         /* RGM: NAKs sent by receivers (also when the release
				  was only slow: the root ignores a NAK for a
				  barrier it has not released yet) */
	uint64_t retransmits;  /* RGM: release datagrams the root sent again */
	uint64_t duplicates;   /* RGM: release datagrams received and discarded */
	uint64_t pulls;        /* RGM: releases learnt by reading the root's word */
	uint64_t mcast_drops;  /* RGM: release datagrams this instance's members
				  discarded by drop injection (its own group's count) */
	uint64_t gather_spins; /* RGM: gathers in which a parent spun, without
				  yielding, for its children on other PUs (pinned and
				  oversubscribed; barrier_rgm.c) */
	uint64_t spin_timeouts; /* RGM: of those, spins that ran out and yielded */
};

struct ibc_barrier_alg {
	const char *name;
	const char *desc;
	unsigned needs;                           /* enum ibc_barrier_needs */
	const struct ibc_barrier_tunable *tunables; /* ends with { NULL } */
	/* private: called by barrier.c (see barrier_impl.h) */
	int (*setup)(struct ibc_barrier *b);      /* collective, at the first barrier */
	int (*run)(struct ibc_barrier *b, uint64_t id);
	int (*teardown)(struct ibc_barrier *b);   /* collective, before resources go */
	void (*counters)(struct ibc_barrier *b);  /* optional: refresh b's counters */
	/* public: the critical path on n ranks at this fan-in as rounds
	 * (pattern.h), for cost models; returns the count (> cap: r too short)
	 * or < 0; optional */
	int (*rounds)(int n, int fanin, struct ibc_pattern_round *r, int cap);
	size_t priv_size;
};

/* The table. */
size_t ibc_barrier_alg_count(void);
const struct ibc_barrier_alg *ibc_barrier_alg_get(size_t i);
/* NULL (and nothing logged) when no algorithm has that name. */
const struct ibc_barrier_alg *ibc_barrier_alg_find(const char *name);
/* The critical path of algorithm name on n ranks at fan-in fanin (<= 0:
 * the default) as rounds (alg.rounds); IBC_ERR_NOTFOUND for a name not in
 * the table or without rounds, IBC_ERR_INVAL for a bad n or fan-in. */
int ibc_barrier_alg_rounds(const char *name, int n, long fanin, struct ibc_pattern_round *r,
			   int cap);
/* Comma-separated names of the table, e.g. for --help ("rpe,rds,rgm,pe,ds"). */
const char *ibc_barrier_alg_names(void);

/* IBC_OK when x offers what alg needs, else IBC_ERR_UNSUPPORTED and a
 * reason in why (may be NULL). */
int ibc_barrier_alg_usable(const struct ibc_barrier_alg *alg, const struct ibc_xport *x,
			   char *why, size_t whylen);

void ibc_barrier_params_init(struct ibc_barrier_params *p);
/* Validates p for alg on n ranks; on error logs a clear message and
 * returns IBC_ERR_INVAL ("barrier rgm: fan-in 4 is not of the form
 * 2^k - 1 (1, 3, 7, 15, ...)", "barrier: N = 0 ranks", ...).  *fanin_out
 * (may be NULL) receives the fan-in that will be used. */
int ibc_barrier_params_check(const struct ibc_barrier_alg *alg, int n,
			     const struct ibc_barrier_params *p, int *fanin_out);

/* Creates an instance of algorithm name over x (not collective: setup
 * happens at the first barrier).  IBC_ERR_NOTFOUND for an unknown name,
 * IBC_ERR_INVAL for bad parameters, IBC_ERR_UNSUPPORTED when x lacks a
 * capability; each is logged.  p may be NULL for the defaults. */
int ibc_barrier_create(struct ibc_xport *x, const char *name,
		       const struct ibc_barrier_params *p, struct ibc_barrier **out);
/* The setup the first barrier does (§4.1: registration, descriptor
 * exchange, connections), done now; collective, optional.  Benchmarks call
 * it so that the first timed or warm-up barrier is not the setup. */
int ibc_barrier_setup(struct ibc_barrier *b);
/* One barrier (collective).  The first call also sets up. */
int ibc_barrier_run(struct ibc_barrier *b);
/* Collective; frees b even on error. */
int ibc_barrier_destroy(struct ibc_barrier *b);

const struct ibc_barrier_alg *ibc_barrier_alg_of(const struct ibc_barrier *b);
int ibc_barrier_fanin(const struct ibc_barrier *b); /* resolved fan-in (RGM), else 0 */
/* This rank's counters. */
void ibc_barrier_counters_get(struct ibc_barrier *b, struct ibc_barrier_counters *out);
/* Collective (bootstrap allgather): the counters summed over all ranks
 * (barriers: rank 0's count). */
int ibc_barrier_counters_sum(struct ibc_barrier *b, struct ibc_barrier_counters *out);

/* `ucc_info -A` style listing of the table: name, needs, description and,
 * with verbose, the tunables with defaults. */
void ibc_barrier_list_print(FILE *out, int verbose);

/* --validate: nobody leaves barrier k before everybody entered it.
 * Two checks, one interface:
 *  - shared (ranks on one host): a counter in shared memory (ibc_boot_shm_map)
 *    that every rank increments before entering barrier k; after leaving it a
 *    rank must see at least (k + 1) * N.  Per-rank entry/exit times
 *    (CLOCK_MONOTONIC, one host) are checked after the run too: for every k
 *    the latest entry precedes the earliest exit.
 *  - remote (ranks on several hosts, no common clock): every rank keeps its
 *    own entry count modulo 256 in one byte of registered memory and sets it
 *    to k + 1 before entering barrier k; after leaving it, it reads every
 *    peer's byte with a 1-byte RDMA read (cannot tear, writes nothing) over an
 *    own instance of the transport, and ibc_barrier_check_entry_ok judges it.
 *    Sound because a peer's store precedes its barrier messages, which precede
 *    this rank's exit; one round of N - 1 reads per barrier, so for validation
 *    only.
 * AUTO picks shared on one host, remote on several (x required there). */
enum ibc_barrier_check_mode {
	IBC_BARRIER_CHECK_AUTO = 0,
	IBC_BARRIER_CHECK_SHARED,
	IBC_BARRIER_CHECK_REMOTE
};
struct ibc_barrier_check;
struct ibc_xport;
/* Collective.  max_iters bounds the barriers whose times are recorded (shared
 * mode; later ones are only checked by the counter).  x: the transport whose
 * backend and device the remote check uses (may be NULL in shared mode). */
int ibc_barrier_check_open(struct ibc_boot *boot, struct ibc_xport *x,
			   enum ibc_barrier_check_mode mode, size_t max_iters,
			   struct ibc_barrier_check **out);
void ibc_barrier_check_enter(struct ibc_barrier_check *c);
/* The remote check's verdict on a peer's entry count byte, read after this
 * rank left barrier k: 1 when it is k + 1 or k + 2 modulo 256.  A correct
 * barrier allows exactly those: the peer entered barrier k, and cannot have
 * left barrier k + 1, which needs this rank.  Anything else is a violation,
 * caught unless the peer is a multiple of 256 barriers off (an earlier
 * barrier's check has failed by then). */
int ibc_barrier_check_entry_ok(uint8_t got, uint64_t k);
/* IBC_ERR_VALIDATE (logged once per check) when this rank left early. */
int ibc_barrier_check_exit(struct ibc_barrier_check *c);
/* Collective: gathers the counts and timestamps and checks them;
 * *violations (may be NULL) = violations seen by the counters on every rank
 * + by the times (at rank 0).  IBC_ERR_VALIDATE when any rank saw one. */
int ibc_barrier_check_close(struct ibc_barrier_check *c, uint64_t *violations);

#endif
