/* The LoP suite's kernels, shared between its files (private to
 * impl/logp): their arguments and instance, and the message primitives
 * every kernel uses.  logp_suite.c: the kernels on the suite driver
 * (set-up, the timed iterations, validation, the table); this header: where
 * a message lies, and posting; logp_msg.c: building, reaping and waiting
 * for an iteration's messages; logp_mcast.c: rtt-mcast, the multicast
 * kernel. */
#ifndef IBC_LOGP_KERNEL_H
#define IBC_LOGP_KERNEL_H

#include "core/status.h"
#include "suite/suite.h"
#include "xport/xport.h"

#include <stddef.h>
#include <stdint.h>

struct ibc_logp_pool;

#define WAIT_NS 30000000000LL
#define LK_TAG 0x10C9ULL
#define FLAG_MIN (1ULL << 56) /* a slot's last word once the message's last byte (1) is in */
#define PAD8(n) (((n) + 7) & ~(size_t)7)
#define PRTT_PROBES 21
#define MAX_P 1024 /* peers per kernel */
#define COPY_N 16  /* copies per sample of the copy kernel (copy-peer: 1) */
#define CACHE_LINE 64
#define SEQ_BYTES 8         /* rtt-mcast: the iteration behind each datagram's payload */
#define LK_SETS 8           /* the write round trips' sets of slots, one call each in turn */
#define LK_SET_ALIGN 4096   /* each set on pages of its own */

enum lk_kind { LK_OS, LK_OR, LK_RTT_1N, LK_RTT_N1, LK_PRTT, LK_RTT_POOL, LK_RTT_MCAST, LK_XCHG,
	       LK_COPY, LK_COPY_PEER }; /* the copy kinds last (kind >= LK_COPY) */

struct lk_arg {
	enum lk_kind kind;
	int write;     /* RDMA WRITE instead of SEND */
	int list;      /* the p requests as one post list */
	int inl;       /* inline */
	int prtt_n;    /* PRTT: messages */
	int prtt_d;    /* PRTT: the delay d = PRTT(1, 0, s) */
	int user;      /* the receivers' slots in user memory (mr_reg), not mr_alloc'd */
	int readout;   /* RTT 1:n write: each end copies out the block it received, untimed;
			  2: and the flag the reader waits for is a write of its own behind
			  the block, on a line of its own (HRWG's tail flag); xchg-write: 2,
			  each rank copies its partner's block out (timed back to back) */
	int all;       /* o_s: every rank posts to its p next ranks at once, not rank 0 alone */
};

/* --validate: every message of an iteration has its own source slot (one
 * per destination and index, kmax indices: PRTT's n messages, else 1) and
 * lands in its own slot of the receiver (one per source and index), filled
 * before the iteration with the pattern of its source, destination,
 * iteration and index (suite.h; its last byte, the arrival flag of a write,
 * with the low bit set) and checked after it (prepare, validate: untimed,
 * the ranks lined up around it: IBC_SUITE_V_ONE_SIDED); a write's flag is
 * then cleared there, not in the timed wait.  Unvalidated, every message
 * goes from one buffer of ones and into the slot of its source. */
struct lk_inst {
	struct ibc_xport_mr *mr;      /* N * kmax slots: writes land at the end of the writer's, receives at the start */
	struct ibc_xport_mr *src;     /* the message(s): one slot, or N * kmax validated */
	struct ibc_xport_rdesc *rd;   /* every rank's mr */
	size_t m, slot;
	int p;
	int nranks;
	size_t flags_off;             /* readout 2: the flag lines in mr (one per source), 0 none */
	int kmax;                     /* messages from one rank to another per iteration with their own slot */
	int validate;
	double d_us;                  /* PRTT's delay */
	long done_iter;               /* the iteration whose arrivals are unchecked, or 0 */
	uint64_t bad;                 /* wrong bytes received */
	long bad_iter;                /* the first */
	int bad_from, bad_k;
	size_t bad_off;
	struct lk_msg *msgs;          /* room for an iteration's messages of this rank */
	unsigned char *dst;           /* the copy kernels' destination (rank 0's own memory);
					 readout's (every rank's) */
	void *umem;                   /* mr's memory when registered with mr_reg (arg user) */
	struct ibc_logp_pool *pool;   /* rtt-pool-1n: its transport and receive pool */
	struct ibc_xport_mcast *grp;  /* rtt-mcast: the group of ranks 0 and 1 */
	uint64_t resent, stale;       /* rtt-mcast: datagrams sent again (rank 0), and
					 received twice and dropped (rank 1) */
	int ack_due;                  /* copy-peer: rank 0 owes rank 1 its slot back, rank 1 awaits it */
	int b2b;                      /* the run is the suite's back-to-back loop's (o->in_b2b):
					 no prepare between runs, so a write's flag is cleared
					 in its wait even when validated */
	uint64_t seq;                 /* rtt-mcast: the runs so far (the next datagram's iteration) */
	int mc_posted;                /* rtt-mcast, rank 1: a receive for the next datagram is posted */
	uint64_t *mc_due;             /* rtt-mcast, rank 0, back to back: the flag of the write
					 back still due, of the last datagram sent (logp_mcast.c) */
	/* The write round trips and rtt-mcast (lk_sets): mr holds nsets sets of the slots
	 * (and of the flag lines behind them, readout 2), set_len bytes apart, and each
	 * call's messages land in the next set in turn on every rank (set_off: the
	 * current one's offset, added to the mr addresses of ibc_logp_msg_wr,
	 * ibc_logp_msg_in, ibc_logp_flag_of and the flag lines').  A line's cost to
	 * move between two cores depends on where it lies (docs/model.md: eight
	 * instances of the same round trip in one run read 0.27-0.39 us on one
	 * host), so the kernel's figure is over nsets placements, not one.  Else 1
	 * and 0. */
	int nsets, set;
	size_t set_len, set_off;
};

/* where set k of the slots starts in mr (lk_inst) */
static inline size_t ibc_logp_set_off(const struct lk_inst *in, int k)
{
	return (size_t)k * in->set_len;
}

/* a message of an iteration as one end sees it */
struct lk_msg {
	int peer, k, write;
};

/* Where a message lies, and posting: inline, as they were in one file,
 * since the timed regions call them (an o_s sample is a post). */

/* the offset of slot (from, k) in mr; of (to, k) in src */
static inline size_t ibc_logp_slot_of(const struct lk_inst *in, int rank, int k)
{
	return ((size_t)rank * (size_t)in->kmax + (size_t)(k % in->kmax)) * in->slot;
}

/* where a received message lies: at the start of its slot (a receive) or
 * at its end (a write) */
static inline const unsigned char *ibc_logp_msg_in(const struct lk_inst *in, const struct lk_msg *g)
{
	return (const unsigned char *)in->mr->addr + in->set_off + ibc_logp_slot_of(in, g->peer, g->k) +
	       (g->write ? in->slot - in->m : 0);
}

/* the last word of slot (from, k): a write's arrival flag */
static inline uint64_t *ibc_logp_flag_of(const struct lk_inst *in, int from, int k)
{
	return (uint64_t *)((unsigned char *)in->mr->addr + in->set_off + ibc_logp_slot_of(in, from, k) +
			    in->slot - 8);
}

/* Posts wrs[0..n): one call (list) or one call each. */
static inline int ibc_logp_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int list)
{
	int posted, i, rc = IBC_OK;

	if (list)
		return ibc_xport_post(x, wrs, n, &posted);
	for (i = 0; i < n && rc == IBC_OK; i++)
		rc = ibc_xport_post(x, &wrs[i], 1, &posted);
	return rc;
}

/* logp_msg.c: an iteration's messages */
void ibc_logp_msg_wr(const struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a,
		     int peer, int k, int write, struct ibc_xport_sge *sge, struct ibc_xport_wr *wr);
int ibc_logp_wrs_to(const struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a,
		    int peer, int write, struct ibc_xport_sge *sge, struct ibc_xport_wr *wrs);
int ibc_logp_wrs_to_peers(const struct ibc_xport *x, const struct lk_inst *in,
			  const struct lk_arg *a, int write, struct ibc_xport_sge *sge,
			  struct ibc_xport_wr *wrs);
int ibc_logp_reap(struct ibc_xport *x, int cq, int n);
int ibc_logp_msg_wait(struct ibc_xport *x, const struct lk_inst *in, int from, int write);
int ibc_logp_msg_send(struct ibc_xport *x, const struct lk_inst *in, const struct lk_arg *a,
		      int peer, int write);

/* logp_mcast.c: rtt-mcast */
int ibc_logp_mcast_settle(struct ibc_xport *x, struct lk_inst *in, const struct lk_arg *a);
int ibc_logp_mcast_recv_post(struct ibc_xport *x, struct lk_inst *in, int next);
int ibc_logp_run_rtt_mcast(struct ibc_suite_op *o, struct lk_inst *in, const struct lk_arg *a);

#endif
