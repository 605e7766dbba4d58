/* All-to-all personalized exchange (Sur, Jin, Panda: "Efficient and Scalable
 * All-to-All Personalized Exchange for InfiniBand-based Clusters") over the
 * transport interface (impl/xport/xport.h) only.
 *
 * One table of algorithms, as for the barriers; every entry runs on every
 * transport that offers what it needs:
 *
 *   hrwg        §5.3: combining over RDMA write with a gather list, copy based:
 *               the send buffer is copied once into a persistent registered
 *               buffer, blocks are forwarded from where they landed by one
 *               gather write per step, the tail flag is written last; the
 *               persistent buffer has two halves (back-to-back calls never
 *               wait for a reset) and one region per step (per hypercube
 *               neighbour); powers of two use the hypercube schedule (log2 p
 *               steps), other p the Bruck schedule (ceil(log2 p) steps) in
 *               the same buffer (impl/pattern, "combining all-to-all")
 *   hrwg-multi  the same with one RDMA write per block (Fig. 12's pair)
 *   de          §5.4 Direct Eager: the receive buffer's address goes by RDMA to
 *               (rank + i) mod p, i = 1..p-1; step i waits for the address of
 *               (rank - i) mod p, writes its block there zero copy from the
 *               user's send buffer (registered once through the registration
 *               cache) and then a completion flag
 *   hypercube   eq. 1, "current implementation" for small messages: the
 *               hypercube over two-sided messages with copies (p a power of two)
 *   bruck       Bruck's combining algorithm over two-sided messages, copies, any p
 *   pairwise    pairwise exchange over two-sided messages (MPICH's large-message
 *               algorithm): XOR partners for powers of two, else send to
 *               rank + i and receive from rank - i
 *   direct      eq. 2-3: the direct virtual ring over two-sided messages with a
 *               rendezvous per message (RTS, CTS with the receive block
 *               registered through the cache, RDMA write, FIN)
 *
 * Two-sided messages (impl/alltoall/alltoall_p2p.c) are an MPI-like layer
 * over SEND/RECV: eager up to params.eager_max (copied through pre-posted
 * receive buffers of impl/family/family_recv.h), rendezvous above it.
 *
 * Buffers: run(a, sbuf, rbuf, m): block j of sbuf (m bytes at j*m) goes to
 * rank j and lands at rbuf + rank*m there.  Calls are collective and may run
 * back to back; sbuf and rbuf may change between calls.
 *
 * Use:
 *   ibc_alltoall_params_init(&p); p.max_bytes = largest m;
 *   ibc_alltoall_create(x, "hrwg", &p, &a);
 *   ibc_alltoall_setup(a);                      (collective: buffers, exchange)
 *   ibc_alltoall_run(a, sbuf, rbuf, m);         (collective)
 *   ibc_alltoall_destroy(a);                    (collective)
 * Several instances may share one transport, also with instances of other
 * families (barriers, channels): completions and two-sided messages go to
 * their owners (impl/family); not thread-safe.  Two-sided messages use the
 * transport's receive pool, whose slots the first two-sided instance on it
 * sizes: a later instance with a larger eager limit sends eager only what
 * fits (params.eager_max is then an upper bound). */
#ifndef IBC_ALLTOALL_H
#define IBC_ALLTOALL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ibc_xport;
struct ibc_regcache;
struct ibc_alltoall;
struct ibc_pattern_round;

enum ibc_alltoall_needs {
	IBC_ALLTOALL_NEEDS_RDMA_WRITE = 1,
	IBC_ALLTOALL_NEEDS_TWO_SIDED = 2,
	IBC_ALLTOALL_NEEDS_POW2 = 4,      /* p must be a power of two */
	IBC_ALLTOALL_NEEDS_USER_MEM = 8   /* zero copy from/to user buffers (caps.user_mem) */
};

/* Test-only faults (params.mutant): each must make the byte check fail. */
enum ibc_alltoall_mutant {
	IBC_ALLTOALL_MUTANT_NONE = 0,
	IBC_ALLTOALL_MUTANT_NO_TAIL_WAIT = 1, /* hrwg reads a step's region without
						 waiting for its tail flag */
	IBC_ALLTOALL_MUTANT_ONE_HALF = 2      /* hrwg uses one half for every call */
};

struct ibc_alltoall_params {
	size_t max_bytes;      /* largest m the instance will see (hrwg sizes its
				  persistent buffer by it); default 4096 */
	size_t eager_max;      /* two-sided: eager up to this many bytes (default 8192) */
	double deadline_s;     /* give up waiting after this long (default 60) */
	struct ibc_regcache *rcache; /* shared registration cache; NULL = the instance's own */
	double jitter_us;      /* tests: a random delay up to this long before some
				  steps (0 = none) */
	unsigned jitter_seed;
	enum ibc_alltoall_mutant mutant;
};

struct ibc_alltoall_counters {
	uint64_t calls;
	uint64_t reg_hits, reg_misses;   /* this instance's registration cache lookups */
	uint64_t writes;                 /* RDMA writes posted (data, not flags) */
	uint64_t sends;                  /* two-sided messages sent (eager, RTS, CTS, FIN) */
	uint64_t rndz;                   /* rendezvous handshakes */
	uint64_t copy_bytes;             /* bytes copied by the CPU */
};

struct ibc_alltoall_alg {
	const char *name;
	const char *desc;
	unsigned needs;                  /* enum ibc_alltoall_needs */
	const void *arg;                 /* the algorithm's constant (e.g. gather/multi) */
	/* private (alltoall_impl.h) */
	int (*setup)(struct ibc_alltoall *a);
	int (*run)(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m);
	void (*teardown)(struct ibc_alltoall *a);
	/* public: the critical path on n ranks as rounds (pattern.h), for cost
	 * models; returns the count (> cap: r too short) or < 0; optional */
	int (*rounds)(int n, struct ibc_pattern_round *r, int cap);
};

size_t ibc_alltoall_alg_count(void);
const struct ibc_alltoall_alg *ibc_alltoall_alg_get(size_t i);
const struct ibc_alltoall_alg *ibc_alltoall_alg_find(const char *name);
/* IBC_OK when alg can run on x with n ranks, else IBC_ERR_UNSUPPORTED and why. */
int ibc_alltoall_alg_usable(const struct ibc_alltoall_alg *alg, const struct ibc_xport *x, int n,
			    char *why, size_t cap);
void ibc_alltoall_list_print(FILE *out);
/* The critical path of algorithm name on n ranks as rounds (alg.rounds);
 * IBC_ERR_NOTFOUND for a name not in the table or without rounds,
 * IBC_ERR_INVAL when it cannot run on n (e.g. hypercube, n not a power of 2). */
int ibc_alltoall_alg_rounds(const char *name, int n, struct ibc_pattern_round *r, int cap);

void ibc_alltoall_params_init(struct ibc_alltoall_params *p);
/* Not collective: checks and allocates (IBC_ERR_NOTFOUND, IBC_ERR_UNSUPPORTED, logged). */
int ibc_alltoall_create(struct ibc_xport *x, const char *name,
			const struct ibc_alltoall_params *p, struct ibc_alltoall **out);
int ibc_alltoall_setup(struct ibc_alltoall *a);   /* collective; run() calls it if needed */
/* m > params.max_bytes: IBC_ERR_INVAL for hrwg (its buffer is sized at setup). */
int ibc_alltoall_run(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m);
int ibc_alltoall_destroy(struct ibc_alltoall *a); /* collective; frees a even on error */
void ibc_alltoall_counters_get(const struct ibc_alltoall *a, struct ibc_alltoall_counters *out);
const struct ibc_alltoall_alg *ibc_alltoall_alg_of(const struct ibc_alltoall *a);

/* Test data: byte o of the block from src to dst in call it is a function of
 * (src, dst, o, it).  fill writes rank's n blocks of m bytes; check returns
 * the number of wrong bytes of rbuf and the first one's source block and
 * offset (either pointer may be NULL). */
void ibc_alltoall_fill(void *sbuf, int rank, int n, size_t m, uint64_t it);
size_t ibc_alltoall_check(const void *rbuf, int rank, int n, size_t m, uint64_t it,
			  int *bad_src, size_t *bad_off);

#endif
