/* Communication patterns: pure rank arithmetic, no I/O, no allocation.
 *
 * Every collective in ibchar takes its partners, rounds and tree shape from
 * here, so the arithmetic is unit-tested once (tests/pattern/pattern.c)
 * without any transport.  Ranks are 0..n-1.
 *
 * A "step" is what one rank does in one round of a symmetric schedule:
 * signal send_to (if >= 0), then wait for recv_from (if >= 0).  Schedules:
 *
 *   dissemination (Hensgen/Finkel/Manber; Mellor-Crummey & Scott):
 *       round m: send to (i + 2^m) mod n, receive from (i - 2^m) mod n;
 *       ceil(log2 n) rounds for every n.
 *   pairwise exchange (MPICH's recursive-doubling barrier): with p the
 *       largest power of two <= n and r = n - p "extra" ranks:
 *         step 0 (only when r > 0): extra rank p + j sends to j, j receives;
 *         then log2 p exchanges among ranks < p: partner = i XOR 2^k;
 *         last step (only when r > 0): j sends to p + j, p + j receives.
 *       log2 n steps when n is a power of two, floor(log2 n) + 2 otherwise.
 *       Extra ranks are idle (send_to = recv_from = -1) in the middle steps.
 *
 * Trees (for gathers), rooted at any rank through relative ranks
 * rel = (rank - root) mod n:
 *
 *   k-nomial, radix r = l + 1 (RGM's "gather with maximum fan-in l"): in
 *       stage s, each group of r consecutive multiples of r^s sends to the
 *       group's first member, so a rank gathers from at most l = r - 1
 *       children per stage and the tree has ceil(log_r n) stages (the hops of
 *       the barrier signal to the root, as in Kini et al. §3.3).  A rank's
 *       parent is rel with its lowest non-zero base-r digit cleared.  With
 *       l = 1 this is the binomial tree.
 *   k-ary (heap order): parent (rel - 1) / k, children k*rel + 1 .. k*rel + k;
 *       at most k children in total.
 *
 * Hypercube: in dimension d the partner is i XOR 2^d (-1 when that is >= n).
 * Ring: the neighbour at distance s is (i + s) mod n, the one behind it
 * (i - s) mod n (e.g. the direct-eager alltoall's step s).
 *
 * Combining all-to-all schedules (store and forward, in place): a rank holds
 * n slots of one block each; a step sends some slots, consolidated, to one
 * rank and receives the same number of blocks from another, into the same
 * slots in the same order.
 *   hypercube (n a power of two; Sur et al. eq. 1, the HRWG schedule): slot
 *       k starts with the block for rank k; in step d the slots whose bit d
 *       differs from the rank's bit d go to rank XOR 2^d and the partner's
 *       come back; at the end slot k holds the block from rank k.  n/2 slots
 *       per step, log2 n steps.
 *   Bruck (any n): slot i starts with the block for (rank + i) mod n; in step
 *       k the slots with bit k of i set go to (rank + 2^k) mod n and come
 *       from (rank - 2^k) mod n; at the end slot i holds the block from
 *       (rank - i) mod n.  ceil(log2 n) steps. */
#ifndef IBC_PATTERN_H
#define IBC_PATTERN_H

/* The largest value of n the arithmetic is defined for (no overflow of 2^m). */
#define IBC_PATTERN_MAX_N (1 << 28)

struct ibc_pattern_step {
	int send_to;   /* rank to signal in this step, -1 for none */
	int recv_from; /* rank to wait for in this step, -1 for none */
};

/* One rank's place in a gather tree. */
struct ibc_pattern_node {
	int parent;    /* -1 at the root */
	int stage;     /* the stage in which this rank signals its parent (root: -1) */
	int depth;     /* hops from this rank up to the root */
	int height;    /* stages (levels) of the whole tree: max depth */
	int nchildren; /* number of children written to the caller's array */
};

/* floor(log2 n), ceil(log2 n) for n >= 1; 1 when n is a power of two. */
int ibc_pattern_log2_floor(int n);
int ibc_pattern_log2_ceil(int n);
int ibc_pattern_pow2_is(int n);
/* ceil(log_base n) for n >= 1, base >= 2 (the stages of a k-nomial tree). */
int ibc_pattern_logk_ceil(int n, int base);

/* Dissemination: number of rounds, and rank's step in round m.
 * IBC_ERR_INVAL on n < 1, rank or round out of range. */
int ibc_pattern_diss_nsteps(int n);
int ibc_pattern_diss_step_get(int n, int rank, int round, struct ibc_pattern_step *out);

/* Pairwise exchange (MPICH recursive doubling with fold-in/release of the
 * ranks beyond the largest power of two). */
int ibc_pattern_pe_nsteps(int n);
int ibc_pattern_pe_step_get(int n, int rank, int step, struct ibc_pattern_step *out);

/* k-nomial gather tree of radix (fan-in + 1) >= 2.  children (capacity cap,
 * n - 1 is always enough; NULL with cap 0 to count only) is filled in the
 * order a rank should wait for them: stage 0 first.  IBC_ERR_INVAL on bad
 * arguments or a too small array. */
int ibc_pattern_knomial_node_get(int n, int radix, int root, int rank,
				 int *children, int cap, struct ibc_pattern_node *out);
/* The stage in which rank signals its parent (-1 for the root). */
int ibc_pattern_knomial_stage(int n, int radix, int root, int rank);
/* In a sweep of fan-ins l = 1, 3, 7, 15, ... over n >= 2 ranks: 1 when l
 * gives a tree the smaller ones do not, i.e. l < n - 1 or l is the first
 * >= n - 1 (the flat tree, which every larger l repeats). */
int ibc_pattern_fanin_distinct(long l, int n);

/* k-ary heap-ordered tree, arity >= 1. */
int ibc_pattern_kary_node_get(int n, int arity, int root, int rank,
			      int *children, int cap, struct ibc_pattern_node *out);

/* Hypercube: ceil(log2 n) dimensions; partner in dimension dim or -1 when
 * i XOR 2^dim >= n (only possible when n is not a power of two). */
int ibc_pattern_hcube_ndims(int n);
int ibc_pattern_hcube_partner(int n, int rank, int dim);

/* Ring: (rank + dist) mod n and (rank - dist) mod n for any dist (may be
 * negative or >= n). */
int ibc_pattern_ring_next(int n, int rank, int dist);
int ibc_pattern_ring_prev(int n, int rank, int dist);

/* Combining all-to-all schedules (see above). */
enum ibc_pattern_comb {
	IBC_PATTERN_COMB_HCUBE = 0,
	IBC_PATTERN_COMB_BRUCK = 1
};
/* Steps; IBC_ERR_INVAL (< 0) for n < 1 or a hypercube of n not a power of two. */
int ibc_pattern_comb_nsteps(enum ibc_pattern_comb kind, int n);
/* The partners of rank in step (send_to = recv_from for the hypercube). */
int ibc_pattern_comb_step_get(enum ibc_pattern_comb kind, int n, int rank, int step,
			      struct ibc_pattern_step *out);
/* 1 when slot moves in step (it is sent, and a received block replaces it),
 * else 0; -1 on bad arguments. */
int ibc_pattern_comb_moves(enum ibc_pattern_comb kind, int n, int rank, int step, int slot);
/* How many slots move in step (the same on every rank); -1 on bad arguments. */
int ibc_pattern_comb_nmoves(enum ibc_pattern_comb kind, int n, int step);
/* The send-buffer block a slot starts with, and the receive-buffer block it
 * ends as; -1 on bad arguments. */
int ibc_pattern_comb_in_block(enum ibc_pattern_comb kind, int n, int rank, int slot);
int ibc_pattern_comb_out_block(enum ibc_pattern_comb kind, int n, int rank, int slot);

/* Rounds, for cost models (the LoP closed loop, impl/logp): a schedule's
 * critical path as a list of rounds.  In a round the busiest rank sends
 * `out` messages to distinct peers and waits for `in` messages, each of
 * `blocks` blocks (0: a signal only); kind says how they travel. */
enum ibc_pattern_round_kind {
	IBC_PATTERN_ROUND_WRITE = 0,  /* RDMA write */
	IBC_PATTERN_ROUND_SEND = 1,   /* two-sided send/receive */
	IBC_PATTERN_ROUND_MCAST = 2   /* one multicast datagram to everyone */
};

/* An algorithm's local copies in the round (0 from the schedules here; its
 * own rounds callback adds them): `copies` blocks it copies from memory it
 * wrote itself (staging, packing, its own block), `copies_peer` blocks out
 * of memory a peer has just written (received blocks copied out); `eager`:
 * the round's message goes through a message layer that copies it in on the
 * sending side and out on the receiving side when it is eager (its bytes
 * up to the eager limit), as one copy of the message each.  `user_writes`:
 * blocks the rank writes one-sidedly into a peer's user memory (registered
 * with mr_reg; on shm process_vm_writev) beside the round's messages.
 * `flag_line`: a write round's messages end in a flag written on its own
 * (a write of its own, on a line of its own behind the blocks), not in the
 * blocks' last word.  `exchange`: every rank that takes part sends
 * and awaits at once (a dissemination round, a pairwise exchange's step, a
 * combining all-to-all's step, a ring step, the direct exchange), where a
 * one-way step (a fold-in, a tree's stage) has its receivers await ranks
 * that do not wait in turn. */
struct ibc_pattern_round {
	int out, in;
	long blocks;
	enum ibc_pattern_round_kind kind;
	int eager;
	long copies, copies_peer;
	long user_writes;
	int flag_line;
	int exchange;
};

/* Each fills at most cap rounds and returns how many the schedule has (so a
 * return > cap means r was too short), or IBC_ERR_INVAL for bad arguments.
 *   diss:    ceil(log2 n) rounds of one signal out and in
 *   pe:      the pairwise exchange's steps (fold-in and release included)
 *   knomial: the gather of a k-nomial tree of radix (fan-in + 1): per
 *            stage, the root's children in that stage come in (in = that
 *            many, out = 1 for the children sending)
 *   comb:    the combining all-to-all's steps, blocks = slots moved
 *   ring:    direct exchange: all at once (one round, n - 1 out and in) or
 *            one peer per step (n - 1 rounds) */
int ibc_pattern_diss_rounds(int n, enum ibc_pattern_round_kind kind, struct ibc_pattern_round *r,
			    int cap);
int ibc_pattern_pe_rounds(int n, enum ibc_pattern_round_kind kind, struct ibc_pattern_round *r,
			  int cap);
int ibc_pattern_knomial_rounds(int n, int radix, enum ibc_pattern_round_kind kind,
			       struct ibc_pattern_round *r, int cap);
int ibc_pattern_comb_rounds(enum ibc_pattern_comb comb, int n, enum ibc_pattern_round_kind kind,
			    struct ibc_pattern_round *r, int cap);
int ibc_pattern_ring_rounds(int n, int all_at_once, enum ibc_pattern_round_kind kind,
			    struct ibc_pattern_round *r, int cap);

#endif
