/* Private state of the shm transport, shared by xport_shm.c (receive rings,
 * execution, post / poll, open / close), shm_mcast.c (group rings), shm_cq.c
 * (completions) and shm_mem.c (segments, registrations, the access check and
 * the copies), and the inline pieces more than one of them runs (a receive
 * slot claimed and finished, the reason codes).  See xport_shm.c for the
 * design.  Not part of the transport interface: only
 * impl/xport/{xport_shm,shm_*}.c include it. */
#ifndef IBC_XPORT_SHM_PRIV_H
#define IBC_XPORT_SHM_PRIV_H

#include "core/status.h"
#include "xport/xport.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SHM_MAGIC 0x78636269u    /* "ibcx" */
#define SHM_MR_MAX 1024
#define SHM_MR_IDX_BITS 10
#define SHM_MR_IDX_MASK ((1u << SHM_MR_IDX_BITS) - 1)
#define SHM_MCAST_SLOTS 8
#define SHM_MCAST_MTU 4096
#define SHM_GROUP_DEPTH 1024 /* datagrams a group holds (4 MiB of slots) */
#define SHM_GROUP_MAGIC 0x67636269u /* "ibcg" */
#define SHM_INLINE_MAX 1024
#define SHM_MAX_MSG (1ull << 31)
#define SHM_NAME_MAX 64
#define SHM_PREFIX_MAX 32
#define SHM_KIND_SEG 1
#define SHM_KIND_USER 2
#define CL 64

/* ------------------------------------------------------ reason codes ---- */

enum reason {
	RS_OK = 0,
	RS_BAD_RKEY,
	RS_RANGE,
	RS_DEREG,
	RS_PERM,
	RS_LOCAL_PROT,
	RS_REM_INV_REQ,
	RS_LOCAL_LEN,
	RS_ATOMIC_MEM,
	RS_MAP,
	RS_PVM,
	RS_FLUSH,
	RS_REM_OP,
	RS_COUNT
};

/* -------------------------------------------------- shared structures ---- */

struct shm_sge {
	uint64_t addr;
	uint32_t len;
	uint32_t lkey;
};

struct shm_slot {
	_Atomic uint64_t done;   /* seq + 1 once filled by a sender */
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t opcode;
	int32_t status;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t flags;
	int32_t src;
	uint32_t reason;
	struct shm_sge sge[IBC_XPORT_MAX_SGE];
};

struct shm_ring {
	_Alignas(CL) _Atomic uint64_t head;  /* receives posted (owner) */
	_Alignas(CL) _Atomic uint64_t claim; /* receives taken (senders, CAS) */
	_Alignas(CL) uint64_t tail;          /* completions reported (owner only) */
	uint32_t depth;
	_Alignas(CL) struct shm_slot slots[];
};

struct shm_mr_ent {
	_Atomic uint32_t rkey;      /* 0: free */
	_Atomic uint32_t dead_rkey; /* last rkey deregistered from this entry */
	uint32_t access;
	uint32_t kind;
	uint64_t addr, len;
	uint64_t seg_len;
	uint64_t ino, dev;
	int32_t fd;
	uint32_t seq;
};

struct shm_ctl {
	uint32_t magic;
	uint32_t rank, size, depth;
	int32_t pid;
	uint32_t salt;
	uint64_t total_len;
	uint64_t ring_off, ring_stride;
	_Alignas(CL) struct shm_mr_ent mrs[SHM_MR_MAX];
};

/* ---------------------------------------------------- private state ----- */

struct seg_map {
	uint32_t rkey;
	void *base;
	size_t len;
};

struct pend {
	struct pend *next;
	uint64_t seq;         /* its number on the peer's send queue */
	struct ibc_xport_wr wr;
	struct ibc_xport_sge sge[IBC_XPORT_MAX_SGE];
	void *inline_buf;
};

/* A mapped registration resolved at a peer: a later access with the same
 * key, while that key is still the entry's, goes straight to the mapping
 * (the key carries a generation: the same key is the same registration).
 * Saves the entry's snapshot on the fast path.  SHM_RCACHE of them a peer,
 * one per slot of the key's low bits (the registration's table index, salted:
 * consecutive registrations take different slots), so that code turning
 * between a few registrations (a flag and a payload buffer, or several
 * instances of a collective) stays on the fast path, as on a device, where
 * which key a write names costs nothing. */
#define SHM_RCACHE 16

struct rcache {
	uint32_t key;
	unsigned access;
	const _Atomic uint32_t *live;  /* the entry's rkey word */
	uint64_t addr, len;            /* the registered range (owner's addresses) */
	char *base;                    /* where addr is mapped here */
};

/* A send queue's slots, kept as verbs keeps them: a post takes one, and
 * they are given back only when a completion of the queue is polled (that
 * WR's and every earlier one's); a post to a queue with max_send_wr slots
 * taken fails with IBC_ERR_AGAIN.  So code that never signals, or never
 * polls, stops here as it would on a device. */
struct shm_sq {
	uint64_t posted, freed;
};

struct peer {
	struct shm_ctl *ctl;
	size_t ctl_len;
	pid_t pid;
	struct seg_map *maps; /* SHM_MR_MAX entries, allocated on first use */
	struct pend *pend_head, *pend_tail;
	struct rcache rc[SHM_RCACHE]; /* shm_rcache_of */
	struct shm_sq sq;
};

struct own_mr {
	struct ibc_xport_mr pub;
	int idx;
	int kind;
	int fd;
	int named;
	void *map;
	size_t map_len;
	char name[SHM_NAME_MAX];
};

/* A group's datagram ring (its own segment): a line per datagram, its
 * payload in the line when it fits (SHM_GRP_INLINE bytes: RGM's release, a
 * sequence number), else in the datagram's page of big[].  With every
 * payload in a page of its own (4 MiB of slots), each datagram took a page
 * neither side had touched for a while; the ring of small datagrams is now
 * 64 KiB.  On the Xeon host, N = 2, medians of four rounds interleaved
 * (results/reference/model-xeon/mcast-line-slot/interleaved): logp
 * rtt-mcast 1.107 -> 0.516 us, RGM's barrier 0.675 -> 0.484 (p50), 0.516
 * -> 0.477 back to back; RPE the same. */
#define SHM_GRP_INLINE 48
struct grp_slot {
	_Alignas(CL) _Atomic uint64_t seq;  /* number + 1 once the datagram is in */
	uint32_t len;
	int32_t src;
	unsigned char small[SHM_GRP_INLINE];
};

struct grp_seg {
	_Atomic uint32_t magic;              /* set last by the creator */
	uint32_t id, depth, mtu;
	_Alignas(CL) _Atomic uint64_t head;  /* next datagram number */
	_Alignas(CL) struct grp_slot slots[SHM_GROUP_DEPTH];
	_Alignas(4096) unsigned char big[SHM_GROUP_DEPTH][SHM_MCAST_MTU];
};

/* where datagram slot s's payload of len bytes lies */
static inline unsigned char *grp_data(struct grp_seg *seg, struct grp_slot *s, uint32_t len)
{
	return len <= SHM_GRP_INLINE ? s->small : seg->big[s - seg->slots];
}

struct group {
	struct ibc_xport_mcast pub;
	int slot;                 /* its receive ring in this process's control segment */
	struct grp_seg *seg;
	uint64_t cursor;          /* the next datagram number to read */
	int created;              /* this process made the segment (unlinks it at close) */
	struct shm_sq sq;         /* its send queue (one per group, as a UD QP per group) */
	char segname[SHM_NAME_MAX];
	unsigned char bounce[SHM_MCAST_MTU];
};

struct shm {
	char prefix[SHM_PREFIX_MAX];
	int procfd;           /* peers open segments through /proc/<pid>/fd */
	struct shm_ctl *me;
	size_t me_len;
	int me_fd;
	struct peer *peers;
	int npending;         /* WRs waiting in peer queues */
	struct own_mr *mrs[SHM_MR_MAX];
	uint32_t gen[SHM_MR_MAX];
	uint32_t seg_seq;
	struct group *groups[SHM_MCAST_SLOTS];
	char (*gone)[SHM_NAME_MAX]; /* segments of left groups this process made */
	size_t ngone, gone_cap;
	uint64_t rng;
	/* send completion queue (grows; never overflows); each entry names
	 * its send queue (a peer >= 0, a group's slot as -1 - slot) and the
	 * WR's number on it */
	struct scq_ent {
		struct ibc_xport_wc wc;
		int q;
		uint64_t seq;
	} *scq;
	size_t scq_cap, scq_head, scq_count;
	int cur_q;            /* the queue and number of the WR being executed */
	uint64_t cur_seq;
	unsigned rr;          /* first ring polled next time */
	/* rings with receives posted and not yet reported (tail < head), one
	 * bit per ring index: a receive poll visits only these.  Both ends
	 * are this process's (it posts and it reports), so the bits are exact. */
	uint64_t *ractive;
	size_t nrings;
	struct ibc_xport_stats stats;
};

enum { T_PTR = 1, T_PVM = 2 };

struct target {
	int kind;
	char *ptr;        /* T_PTR */
	uint64_t raddr;   /* T_PVM */
	pid_t pid;
	uint64_t len;
};

enum { EXEC_DONE = 0, EXEC_RNR = 1 };

/* ------------------------------------------------------------ helpers ---- */

static inline struct shm *st_of(struct ibc_xport *x)
{
	return x->priv;
}

static inline size_t ring_bytes(uint32_t depth)
{
	size_t b = sizeof(struct shm_ring) + (size_t)depth * sizeof(struct shm_slot);
	return (b + CL - 1) / CL * CL;
}

static inline struct shm_ring *ring_at(struct shm_ctl *c, size_t i)
{
	return (struct shm_ring *)((char *)c + c->ring_off + i * c->ring_stride);
}

/* ring indices: [0, size) receives from that sender, size = shared, size + 1 + g = group */
static inline size_t ring_srq(const struct shm_ctl *c)
{
	return c->size;
}

static inline size_t ring_group(const struct shm_ctl *c, int slot)
{
	return c->size + 1 + (size_t)slot;
}

static inline int rng_drop(struct shm *st, double p)
{
	return ibc_xport_drop_draw(&st->rng, p);
}

/* A local sge lies in one of this process's registrations with access need. */
static inline int shm_local_sge_ok(const struct shm *st, const struct ibc_xport_sge *s,
				   unsigned need)
{
	const struct own_mr *m = st->mrs[(s->lkey ^ st->me->salt) & SHM_MR_IDX_MASK];
	uint64_t base;

	if (m == NULL || m->pub.lkey != s->lkey || (m->pub.access & need) != need)
		return 0;
	base = (uint64_t)(uintptr_t)m->pub.addr;
	return s->addr >= base && s->len <= m->pub.len && s->addr - base <= m->pub.len - s->len;
}

/* The cache entry of a peer's key (struct rcache) */
static inline struct rcache *shm_rcache_of(struct peer *p, uint32_t key)
{
	return &p->rc[key & (SHM_RCACHE - 1)];
}

/* Where [addr, addr + len) of a peer's registration key is mapped here, when
 * key is the registration its cache holds, still live, with access need;
 * NULL otherwise (then the full check decides). */
static inline char *shm_rcache_hit(const struct rcache *rc, uint32_t key, uint64_t addr,
				   uint64_t len, unsigned need)
{
	if (key == 0 || key != rc->key || (rc->access & need) != need || addr < rc->addr ||
	    len > rc->len || addr - rc->addr > rc->len - len ||
	    atomic_load_explicit(rc->live, memory_order_acquire) != key)
		return NULL;
	return rc->base + (addr - rc->addr);
}

/* ------------------------------------------------------- completions --- */

/* shm_cq.c: the text of each reason code */
extern const char *const ibc_xport_shm_reason_text[RS_COUNT];

static inline int reason_status(int r)
{
	switch (r) {
	case RS_OK:
		return IBC_OK;
	case RS_LOCAL_PROT:
	case RS_LOCAL_LEN:
		return IBC_ERR_INVAL;
	case RS_FLUSH:
		return IBC_ERR_CLOSED;
	default:
		return IBC_ERR_REMOTE;
	}
}

static inline const char *reason_str(uint32_t r)
{
	return r < RS_COUNT ? ibc_xport_shm_reason_text[r] : "unknown error";
}

/* Claims the next posted receive of ring r; NULL when none (RNR). */
static inline struct shm_slot *ring_claim(struct shm_ring *r, uint64_t *seq)
{
	uint64_t c = atomic_load_explicit(&r->claim, memory_order_relaxed);

	for (;;) {
		uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
		if (c >= h)
			return NULL;
		if (atomic_compare_exchange_weak_explicit(&r->claim, &c, c + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			break;
	}
	*seq = c;
	return &r->slots[c % r->depth];
}

static inline void slot_finish(struct shm_slot *s, uint64_t seq, int reason, uint32_t opcode,
			       uint32_t byte_len, uint32_t imm, uint32_t flags, int src)
{
	s->status = reason_status(reason);
	s->reason = (uint32_t)reason;
	s->opcode = opcode;
	s->byte_len = byte_len;
	s->imm = imm;
	s->flags = flags;
	s->src = src;
	atomic_store_explicit(&s->done, seq + 1, memory_order_release);
}

/* shm_cq.c */
int ibc_xport_shm_complete_send(struct shm *st, const struct ibc_xport_wr *wr, int reason,
				uint32_t byte_len);
int ibc_xport_shm_deliver(struct shm *st, int peer, struct shm_slot *s, uint64_t seq,
			  const struct iovec *iov, int n, uint64_t total, uint32_t opcode, uint32_t imm,
			  uint32_t flags);

/* shm_mem.c */
int ibc_xport_shm_seg_create(const char *name, size_t len, int *fd_out, void **map_out,
			     struct stat *sb);
int ibc_xport_shm_seg_open_peer(struct shm *st, pid_t pid, int fd, const char *name,
				uint64_t ino, uint64_t dev, size_t len, int try_proc, void **out);
int ibc_xport_shm_resolve(struct shm *st, int peer, int self, uint32_t key, uint64_t addr,
			  uint64_t len, unsigned need, struct target *t);
int ibc_xport_shm_local_iov(struct shm *st, const struct ibc_xport_wr *wr, unsigned need,
			    struct iovec *iov, uint64_t *total);
int ibc_xport_shm_copy_to(const struct target *t, const struct iovec *iov, int n, uint64_t total);
int ibc_xport_shm_copy_from(const struct target *t, const struct iovec *iov, int n, uint64_t total);
int ibc_xport_shm_copy_scatter(const struct target *dst, int ndst, const struct iovec *iov, int n,
			       uint64_t total);
int ibc_xport_shm_mr_reg(struct ibc_xport *x, void *addr, size_t len, unsigned access,
			 struct ibc_xport_mr **out);
int ibc_xport_shm_mr_alloc(struct ibc_xport *x, size_t len, unsigned access,
			   struct ibc_xport_mr **out);
int ibc_xport_shm_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr);
void ibc_xport_shm_mr_release(struct shm *st, struct own_mr *m);

/* shm_mcast.c */
int ibc_xport_shm_mcast_send(struct shm *st, struct ibc_xport *x, const struct ibc_xport_wr *wr);
void ibc_xport_shm_group_pull(struct shm *st, struct ibc_xport *x, struct group *g);
int ibc_xport_shm_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			     struct ibc_xport_mcast **out);
int ibc_xport_shm_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *gp);
void ibc_xport_shm_group_release(struct shm *st, struct group *g);

#endif
