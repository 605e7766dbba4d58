/* Transports: one verbs-like interface, one const ops table per backend.
 *
 * SUMMARY (code against this):
 *  1. ibc_xport_params_init(&p); p.backend = "shm"|"verbs"|"auto";
 *     ibc_xport_open(boot, &p, &x) (collective) -> x->rank, x->size, x->caps, x->wait.
 *  2. ibc_xport_mr_alloc(x, len, IBC_XPORT_ACCESS_ALL, &mr) (shareable memory, best on shm)
 *     or ibc_xport_mr_reg(x, buf, len, access, &mr) (any user buffer; zero copy);
 *     send mr->rdesc to peers: ibc_xport_rdesc_allgather(x, &mr->rdesc, all).
 *  3. ibc_xport_connect(x, NULL) (collective: full mesh; or a want[] mask).
 *  4. Build struct ibc_xport_wr[] (opcode, flags, peer, sge list, remote_addr, rkey,
 *     imm, atomics operands) and ibc_xport_post(x, wrs, n, &posted): one call = a post list;
 *     or the one-op helpers ibc_xport_write/read/send/fadd/cswap.
 *  5. ibc_xport_recv_post(x, rwrs, n, &posted) for SEND / WRITE_IMM / multicast receives.
 *  6. ibc_xport_cq_poll(x, IBC_XPORT_CQ_ANY, max, wc, &n): wc.status (IBC_OK or < 0),
 *     wc.reason (static readable text), wr_id, opcode, byte_len, imm, peer.
 *  7. ibc_xport_mcast_join(x, name, id, &g); post IBC_XPORT_OP_MCAST_SEND with wr.mcast = g;
 *     receives: recv_post with rwr.mcast = g.  Unreliable: datagrams may be lost.
 *  8. ibc_xport_wait_u64(x, &flag, target, timeout_ns, &seen): wait until *flag >= target
 *     with x->wait (core/wait.h: SPIN or SPIN_YIELD); ibc_wait_name() for rows.
 *  9. ibc_xport_mr_dereg, ibc_xport_mcast_leave, ibc_xport_close (collective).
 * 10. Unsupported features return IBC_ERR_UNSUPPORTED (check x->caps first to skip).
 *     Also: ibc_xport_pingpong (8-byte write ping-pong probe), ibc_xport_stats_get.
 *     An instance is used by one thread at a time.
 *
 * Semantics follow InfiniBand verbs (RC queue pairs, UD multicast):
 *  - Ordering: WRs from one initiator to one peer execute in posting order; the
 *    payload of a write is visible at the target before any later write (or send,
 *    write-imm, atomic) of the same initiator to the same peer appears.  So "payload
 *    write, then flag write" is safe; polling the last byte of one write is not.
 *    On shm: stores, then atomic_thread_fence(release) before anything later; the
 *    waiting side loads with acquire (ibc_xport_wait_u64 does).
 *  - Words may be read torn.  An aligned 8-byte write is one store on shm, but
 *    Soft-RoCE copies a write's bytes lowest address first (the kernel's
 *    memcpy), so a reader can see a word's new low-order bytes under its old
 *    high-order ones: a counter raised by 251 read back 5 below its last value.
 *    Of a word that only grows, a read is never above the value being written,
 *    but may be below an earlier read.  So wait for such a word to reach a
 *    target (wait_u64 does: >=) or compare it for equality (sequence words);
 *    never subtract one read of it (the channel keeps the largest value seen:
 *    ch_pointer_read).  IBCHAR_SHM_TORN=1 makes shm store every write so, a
 *    byte at a time with pauses, for tests (make check runs the channel test
 *    that way).
 *    The one exception to "not the last byte": a write that ends on an 8-byte
 *    boundary, into memory from mr_alloc, whose last gather entry holds its
 *    whole last word, shows that word after the rest of it (shm stores it
 *    last with release; RDMA devices place a write's bytes in order, which is
 *    what perftest's and the papers' last-byte polling rely on, though the IB
 *    specification does not promise it).  The channel suite's piggybacked
 *    packets use this.
 *  - READ and atomics may pass earlier writes' completion; IBC_XPORT_WR_FENCE makes a
 *    WR wait until all earlier READ/atomic WRs of that queue have completed.
 *  - A completion of a send-side WR means its local buffers may be reused and its
 *    effect is (or will be, before any later WR's) visible at the target.
 *  - Errors (bad rkey, out-of-range, deregistered memory, ...) always produce an
 *    error completion, also for unsignaled WRs; never a stray store, never a hang.
 *    After an error completion the connection to that peer may be broken (verbs: QP
 *    in error state; further WRs to that peer complete with "flushed").
 *  - Unsignaled WRs: at least one WR in every caps.max_send_wr to a peer (or to
 *    a multicast group: each has its own send queue) must be signaled, and its
 *    completion polled: a queue's slots are given back only then, and a post to
 *    a queue with max_send_wr slots taken fails with IBC_ERR_AGAIN.  Both
 *    backends keep the slots this way (shm too, so make check catches code that
 *    would stall a device).
 *  - Progress: shm needs the process to call post/poll/wait now and then for
 *    two-sided traffic that waits for a receive buffer (RNR); verbs needs nothing.
 */
#ifndef IBC_XPORT_H
#define IBC_XPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/wait.h"

struct ibc_boot;
struct ibc_xport;

/* ------------------------------------------------------------ params ---- */

enum ibc_xport_conn_mode {
	IBC_XPORT_CONN_RC = 0,  /* one RC connection per peer */
	IBC_XPORT_CONN_XRC = 1  /* verbs XRC: XRC domain, one SRQ per process, one initiator
				   QP per remote node shared by the node's processes */
};

#define IBC_XPORT_NAME_MAX 64

struct ibc_xport_params {
	const char *backend;     /* "shm", "verbs" or "auto" (NULL = "auto") */
	const char *device;      /* verbs device name, NULL = first with an ACTIVE port */
	int port;                /* verbs port, 0 = first ACTIVE port */
	int gid_index;           /* RoCE GID index, -1 = auto (a RoCE v2 IPv4 GID if any) */
	uint32_t max_inline;     /* requested inline size in bytes (default 64) */
	uint32_t sq_depth;       /* send queue depth per connection (default 256) */
	uint32_t rq_depth;       /* receive queue depth per connection/group (default 256) */
	uint32_t cq_depth;       /* completion queue depth (default 4096) */
	uint32_t max_sge;        /* gather list length wanted (default 16) */
	enum ibc_xport_conn_mode conn;     /* default RC */
	enum ibc_wait wait; /* default SPIN; the harness sets it */
	/* drop injection (probability in [0,1], seeded per rank from seed) */
	double mcast_drop;       /* a member discards a multicast datagram it would have
				    received (shm and verbs) */
	double p2p_drop;         /* a two-sided SEND is lost (shm only; default 0) */
	uint64_t drop_seed;
};

/* Fills defaults (backend "auto", everything else as documented above). */
void ibc_xport_params_init(struct ibc_xport_params *p);

/* ------------------------------------------------------------- caps ----- */

struct ibc_xport_caps {
	char backend[16];               /* "shm" or "verbs" */
	char device[IBC_XPORT_NAME_MAX];/* "shm" or e.g. "rxe0:1" */
	uint32_t max_inline;            /* effective inline size (0 = no inline) */
	uint32_t max_sge;               /* gather list length (>= 1) */
	uint32_t max_send_wr, max_recv_wr, cq_depth;
	uint64_t max_msg;               /* largest WRITE/READ/SEND */
	uint32_t mcast_mtu;             /* largest multicast datagram, 0 if no multicast */
	int atomics;                    /* FETCH_ADD / CMP_SWAP on 8-byte aligned words
					   (shm: in mr_alloc memory only) */
	int mcast;                      /* UD multicast */
	int mcast_loopback;             /* the sender's own group queue gets its datagrams too */
	int xrc;                        /* IBC_XPORT_CONN_XRC usable */
	int srq;                        /* IBC_XPORT_PEER_ANY receives */
	int user_mem;                   /* mr_reg of arbitrary user memory is remote-accessible */
	int drop_injection;             /* mcast_drop honoured (shm: p2p_drop too) */
	int write_needs_cpu;            /* a peer's RDMA write lands in this process's
					   memory only once a CPU of this host runs for
					   it (verbs: set, rxe's receive path is the
					   kernel's; shm: 0, the writer stores), so a
					   waiter must not keep its PU spinning for one */
	int write_is_copy;              /* an RDMA write is a copy made by the posting
					   CPU at post time (shm: set; verbs: 0, the
					   device's DMA engine moves the bytes) */
};

/* ---------------------------------------------------------- instance ---- */

#define IBC_XPORT_MAX_HOOKS 8

struct ibc_xport {
	const struct ibc_xport_ops *ops;
	struct ibc_boot *boot;
	int rank, size;                    /* = boot's */
	enum ibc_wait wait;
	struct ibc_xport_caps caps;
	struct ibc_xport_params params;    /* copy; string fields point into the bufs below */
	char backend_buf[16], device_buf[IBC_XPORT_NAME_MAX];
	int connected;                     /* set by connect */
	void *priv;                        /* backend state */
	/* progress hooks (ibc_xport_progress_hook_add) */
	struct { int (*fn)(void *arg); void *arg; } hooks[IBC_XPORT_MAX_HOOKS];
	int nhooks;
	int in_hook;
};

/* Opens an instance.  Collective over boot (every rank calls it with the same params;
 * shm creates and maps its shared control areas here; boot is kept for connect and
 * close).  "auto": verbs when a device with an ACTIVE port exists, else shm; the
 * choice is logged at info.  shm needs every rank on one node (else UNSUPPORTED). */
int ibc_xport_open(struct ibc_boot *boot, const struct ibc_xport_params *p,
		   struct ibc_xport **out);
/* Collective over boot: waits for every rank, releases every resource (MRs,
 * groups, connections, shared segments).  x is freed even on error. */
int ibc_xport_close(struct ibc_xport *x);
/* Which backend "auto" would pick, without opening anything ("shm" or "verbs"). */
const char *ibc_xport_auto_backend(void);

/* ---------------------------------------------------------- memory ------ */

enum ibc_xport_access {
	IBC_XPORT_ACCESS_LOCAL_WRITE = 1,   /* local target of READ / recv / atomic result */
	IBC_XPORT_ACCESS_REMOTE_WRITE = 2,
	IBC_XPORT_ACCESS_REMOTE_READ = 4,
	IBC_XPORT_ACCESS_REMOTE_ATOMIC = 8,
	IBC_XPORT_ACCESS_ALL = 15
};

/* What a peer needs to access a registered range: plain data, fixed size, no
 * pointers; send it through the bootstrap as bytes. */
struct ibc_xport_rdesc {
	uint64_t addr;     /* owner's virtual address of the first byte */
	uint64_t len;
	uint32_t rkey;
	uint32_t rank;     /* owner */
	uint32_t flags;    /* backend-private (shm: shared segment or user memory) */
	uint32_t pad;
	uint64_t aux[2];   /* backend-private */
};

struct ibc_xport_mr {
	void *addr;
	size_t len;
	uint32_t lkey;     /* goes into struct ibc_xport_sge */
	uint32_t rkey;
	unsigned access;
	struct ibc_xport_rdesc rdesc;
	void *priv;
};

/* Registers [addr, addr+len) of this process.  On shm a peer reaches such memory
 * through process_vm_writev/readv (caps.user_mem). */
int ibc_xport_mr_reg(struct ibc_xport *x, void *addr, size_t len, unsigned access,
		     struct ibc_xport_mr **out);
/* Allocates len zeroed bytes (page aligned) and registers them; on shm they live in a
 * shared segment that peers map, so remote writes are plain stores. */
int ibc_xport_mr_alloc(struct ibc_xport *x, size_t len, unsigned access,
		       struct ibc_xport_mr **out);
/* Deregisters (and frees, for mr_alloc).  Later remote accesses through its rkey
 * complete with an error. */
int ibc_xport_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr);
/* Collective: all[r] = rank r's mine (all holds x->size entries). */
int ibc_xport_rdesc_allgather(struct ibc_xport *x, const struct ibc_xport_rdesc *mine,
			      struct ibc_xport_rdesc *all);

/* --------------------------------------------------------- connect ------ */

/* Collective over boot (every rank calls it): exchanges endpoint info by one
 * allgather and connects to the peers in want (want[r] != 0; NULL = every peer;
 * a pair is connected when either side wants it).  May be called again to add
 * peers.  Before connect, posting to a peer fails with IBC_ERR_INVAL. */
int ibc_xport_connect(struct ibc_xport *x, const uint8_t *want);

/* ------------------------------------------------------ work requests --- */

enum ibc_xport_opcode {
	/* posted with ibc_xport_post */
	IBC_XPORT_OP_WRITE = 0,    /* sge list (gather) -> [remote_addr, +total) */
	IBC_XPORT_OP_WRITE_IMM,    /* WRITE + consumes one receive at peer, wc.imm = imm */
	IBC_XPORT_OP_READ,         /* [remote_addr, +total) -> sge list (scatter) */
	IBC_XPORT_OP_SEND,         /* sge list -> the peer's next posted receive */
	IBC_XPORT_OP_SEND_IMM,     /* SEND with immediate data */
	IBC_XPORT_OP_FETCH_ADD,    /* *remote += compare_add; old value -> sge[0] (8 bytes) */
	IBC_XPORT_OP_CMP_SWAP,     /* if *remote == compare_add then *remote = swap; old -> sge[0] */
	IBC_XPORT_OP_MCAST_SEND,   /* one datagram (<= caps.mcast_mtu) to group wr.mcast */
	/* completion only */
	IBC_XPORT_OP_RECV,         /* a SEND / SEND_IMM arrived */
	IBC_XPORT_OP_RECV_WRITE_IMM, /* a WRITE_IMM arrived (byte_len = 0, data at its address) */
	IBC_XPORT_OP_MCAST_RECV,   /* a multicast datagram arrived */
	IBC_XPORT_OP_COUNT
};
const char *ibc_xport_opcode_name(enum ibc_xport_opcode op); /* "write", ...; never NULL */

enum ibc_xport_wr_flags {
	IBC_XPORT_WR_SIGNALED = 1,  /* generate a completion on success */
	IBC_XPORT_WR_INLINE = 2,    /* copy payload at post time (<= caps.max_inline):
				       buffers reusable on return, lkey not checked */
	IBC_XPORT_WR_FENCE = 4,     /* wait for earlier READ/atomics of this queue */
	IBC_XPORT_WR_SOLICITED = 8  /* solicited event at the receiver (SEND, WRITE_IMM) */
};

#define IBC_XPORT_MAX_SGE 16
#define IBC_XPORT_PEER_ANY (-1)     /* receives: shared receive queue (caps.srq) */

struct ibc_xport_sge {
	uint64_t addr;   /* local address inside a registered MR */
	uint32_t len;
	uint32_t lkey;
};

struct ibc_xport_wr {
	uint64_t wr_id;
	enum ibc_xport_opcode opcode;
	unsigned flags;                  /* enum ibc_xport_wr_flags */
	int peer;                        /* target rank (ignored for MCAST_SEND) */
	int num_sge;                     /* 0..caps.max_sge */
	const struct ibc_xport_sge *sge;
	uint64_t remote_addr;            /* WRITE*, READ, atomics */
	uint32_t rkey;
	uint32_t imm;                    /* WRITE_IMM, SEND_IMM */
	uint64_t compare_add;            /* FETCH_ADD: the addend; CMP_SWAP: the compare value */
	uint64_t swap;                   /* CMP_SWAP */
	struct ibc_xport_mcast *mcast;   /* MCAST_SEND */
};

struct ibc_xport_recv_wr {
	uint64_t wr_id;
	int peer;                        /* queue of this peer, or IBC_XPORT_PEER_ANY */
	struct ibc_xport_mcast *mcast;   /* non-NULL: the group's receive queue (peer ignored) */
	int num_sge;
	const struct ibc_xport_sge *sge;
};

/* Posts wrs[0..n) in order as one list (verbs: one ibv_post_send per run of WRs to
 * the same peer; the LoP "post list").  Posting them one call each is the "single
 * post" variant; both have the same effect.  *posted = how many were accepted
 * (on error, wrs[*posted] is the bad one: IBC_ERR_INVAL for a malformed WR,
 * IBC_ERR_AGAIN when the send queue is full). */
int ibc_xport_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted);
/* Posts receive buffers (for SEND, SEND_IMM, WRITE_IMM, or a multicast group). */
int ibc_xport_recv_post(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
			int *posted);

/* ------------------------------------------------------- completions ---- */

enum ibc_xport_cq {
	IBC_XPORT_CQ_SEND = 1,   /* completions of posted WRs */
	IBC_XPORT_CQ_RECV = 2,   /* completions of receives (incl. multicast) */
	IBC_XPORT_CQ_ANY = 3
};

enum ibc_xport_wc_flags { IBC_XPORT_WC_IMM = 1 /* imm is valid */ };

struct ibc_xport_wc {
	uint64_t wr_id;
	int status;                 /* IBC_OK, or e.g. IBC_ERR_REMOTE (remote access),
				       IBC_ERR_INVAL (local protection), IBC_ERR_CLOSED (flushed) */
	enum ibc_xport_opcode opcode;
	uint32_t byte_len;          /* receives: bytes received; READ: bytes read */
	uint32_t imm;
	unsigned flags;             /* enum ibc_xport_wc_flags */
	int peer;                   /* send side: target; receive: source rank (-1 unknown) */
	const char *reason;         /* static text: "success", "remote access error: bad rkey", ... */
};

/* Returns up to max completions; *n = how many (0 when none).  Never blocks. */
int ibc_xport_cq_poll(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n);
/* Polls until one completion arrives on cq or timeout_ns passes (< 0: no timeout,
 * IBC_ERR_TIMEOUT on expiry); uses x->wait between polls. */
int ibc_xport_cq_wait(struct ibc_xport *x, int cq, int64_t timeout_ns, struct ibc_xport_wc *wc);
/* Makes pending work progress (shm: sends waiting for a receive; verbs:
 * nothing), then runs the progress hooks.  The waits on memory call it now
 * and then (ibc_xport_wait_u64, the barrier waits, the harness while it waits
 * through the suite driver), so a hook runs wherever this process waits
 * there: e.g. RGM's root answers a NAK while it waits in another barrier or
 * in the harness's sync step.  ibc_xport_cq_wait does not: a hook may poll
 * x's queues (RGM's root polls them through the family router, which hands
 * each completion to the instance that owns it), so a caller that waits for
 * its own completions on x with ibc_xport_cq_wait must not do so while such
 * a hook is on. */
int ibc_xport_progress(struct ibc_xport *x);
/* Adds fn(arg) to x's progress hooks (at most IBC_XPORT_MAX_HOOKS); a hook is
 * not re-entered from inside itself; a non-OK return ends the wait that
 * called ibc_xport_progress with that status.  Remove it before arg goes. */
int ibc_xport_progress_hook_add(struct ibc_xport *x, int (*fn)(void *arg), void *arg);
void ibc_xport_progress_hook_remove(struct ibc_xport *x, int (*fn)(void *arg), void *arg);

/* ------------------------------------------------------- multicast ------ */

struct ibc_xport_mcast {
	uint32_t id;                /* group id (from name when name != NULL) */
	uint32_t mtu;               /* largest datagram */
	char name[IBC_XPORT_NAME_MAX];
	uint64_t dropped;           /* datagrams of this group this member discarded by
				       params.mcast_drop (counted per member, per group) */
	void *priv;
};

/* Creates the group if needed and joins this process to it (local; not collective:
 * members barrier afterwards before the first send, datagrams sent earlier may miss
 * a member).  name != NULL picks the group by name (hashed to an id), else by id.
 * Each member has its own receive queue for the group (post buffers with recv_post);
 * buffers receive the payload only (verbs hides the 40-byte GRH in a private sge). */
int ibc_xport_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			 struct ibc_xport_mcast **out);
/* A group of its own for a new instance: collective over x's ranks (rank 0
 * draws an id from its pid, the clock and salt, and shares it); the ranks
 * with member != 0 join it (*out), the others get NULL.  Errors are logged. */
int ibc_xport_mcast_join_new(struct ibc_xport *x, uint32_t salt, int member,
			     struct ibc_xport_mcast **out);
int ibc_xport_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *g);

/* ---------------------------------------------------------- waiting ----- */

/* Waits until the 64-bit word at addr (local memory, written by peers) is >= target
 * (unsigned), loading with acquire; strategy x->wait; timeout_ns < 0 = forever,
 * else IBC_ERR_TIMEOUT.  *seen (may be NULL) = the last value read. */
int ibc_xport_wait_u64(struct ibc_xport *x, const uint64_t *addr, uint64_t target,
		       int64_t timeout_ns, uint64_t *seen);
/* The same, but spinning whatever x->wait says (no yield, the progress hooks
 * still run), for at most spin_ns (then IBC_ERR_TIMEOUT; the clock is first
 * read after 256 polls, so the spin lasts that much longer).  For a waiter
 * that knows no process needs its PU meanwhile (barrier_rgm.c). */
int ibc_xport_spin_u64(struct ibc_xport *x, const uint64_t *addr, uint64_t target,
		       int64_t spin_ns);
/* Without an instance: ibc_wait_u64 (core/wait.h). */

/* ------------------------------------------------------------ probe ----- */

/* 8-byte RDMA-write ping-pong between ranks a and b (payload = a sequence number,
 * the receiver waits on it with x->wait): the harness's placement probe on verbs.
 * Collective over x's ranks (registers a small region and exchanges its descriptor);
 * ranks other than a and b only take part in that.  On a, *oneway_us = median
 * round trip / 2; elsewhere -1.  Needs connect. */
int ibc_xport_pingpong(struct ibc_xport *x, int a, int b, long rounds, double *oneway_us);

/* ------------------------------------------------------------ stats ----- */

struct ibc_xport_stats {
	uint64_t qps;            /* connections / queue pairs created */
	uint64_t srqs;
	uint64_t conn_bytes;     /* memory held for connections, queues and rings */
	uint64_t mrs;            /* live registrations */
	uint64_t mr_bytes;
	uint64_t posted;         /* work requests posted */
	uint64_t post_calls;     /* post calls (post list vs single post) */
	uint64_t mcast_dropped;  /* injected multicast losses of this process's receives */
	uint64_t mcast_overrun;  /* shm: datagrams a member was too slow to read (lost) */
	uint64_t p2p_dropped;    /* injected two-sided losses caused by this process */
	uint64_t rnr_waits;      /* shm: sends that had to wait for a receive */
	uint64_t key_lookups;    /* shm: remote keys looked up in a peer's table (not cached) */
};
int ibc_xport_stats_get(struct ibc_xport *x, struct ibc_xport_stats *out);

/* ------------------------------------------------------------- ops ------ */

/* Every backend fills every slot (unsupported: return IBC_ERR_UNSUPPORTED).
 * The ibc_xport_* functions above validate common arguments and dispatch here. */
struct ibc_xport_ops {
	const char *name;
	/* IBC_OK when the backend can run here (verbs: a device with an ACTIVE port) */
	int (*probe)(const struct ibc_xport_params *p);
	/* x is allocated and filled (ops, boot, rank, size, params, wait); sets caps, priv */
	int (*open)(struct ibc_xport *x);
	int (*close)(struct ibc_xport *x);
	int (*connect)(struct ibc_xport *x, const uint8_t *want);
	int (*mr_reg)(struct ibc_xport *x, void *addr, size_t len, unsigned access,
		      struct ibc_xport_mr **out);
	int (*mr_alloc)(struct ibc_xport *x, size_t len, unsigned access,
			struct ibc_xport_mr **out);
	int (*mr_dereg)(struct ibc_xport *x, struct ibc_xport_mr *mr);
	int (*post)(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted);
	int (*recv_post)(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
			 int *posted);
	int (*cq_poll)(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n);
	int (*progress)(struct ibc_xport *x);
	int (*mcast_join)(struct ibc_xport *x, const char *name, uint32_t id,
			  struct ibc_xport_mcast **out);
	int (*mcast_leave)(struct ibc_xport *x, struct ibc_xport_mcast *g);
	int (*stats_get)(struct ibc_xport *x, struct ibc_xport_stats *out);
	/* optional (ibc_xport_write_inline): an unsignaled inline write by the
	 * backend's shortest path; returns 1 and *rc when it took the write, 0
	 * when it did not (nothing done: it is posted) */
	int (*write_inline)(struct ibc_xport *x, int peer, const void *src, uint32_t len,
			    uint64_t remote_addr, uint32_t rkey, int *rc);
};

extern const struct ibc_xport_ops ibc_xport_shm_ops;
/* defined (non-weak) by xport_verbs.c; xport.c's backend table refers to it */
extern const struct ibc_xport_ops ibc_xport_verbs_ops;

/* Why the last call of this process returned IBC_ERR_UNSUPPORTED, in the backend's or
 * device's own words (e.g. "rxe0: ibv_open_xrcd: Operation not supported"); "" if no
 * reason was recorded.  Backends record it with ibc_xport_unsupported_set() where they
 * decide; tests print it in their skip lines. */
const char *ibc_xport_unsupported_reason(void);
void ibc_xport_unsupported_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* For backends: drop injection's random numbers, one stream per rank seeded
 * from params.drop_seed; draw returns 1 with probability p. */
uint64_t ibc_xport_drop_seed(const struct ibc_xport *x);
int ibc_xport_drop_draw(uint64_t *rng, double p);

/* The backend table by name ("shm", "verbs"); NULL if unknown or not built. */
const struct ibc_xport_ops *ibc_xport_backend_find(const char *name);

/* 32-bit group id of a group name (FNV-1a), the same on every backend. */
uint32_t ibc_xport_mcast_id_from_name(const char *name);

/* --------------------------------------------------- one-op helpers ----- */

static inline int ibc_xport_write(struct ibc_xport *x, int peer, const struct ibc_xport_sge *sge,
				  int num_sge, uint64_t remote_addr, uint32_t rkey,
				  unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_WRITE, .flags = flags,
				   .peer = peer, .num_sge = num_sge, .sge = sge,
				   .remote_addr = remote_addr, .rkey = rkey };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

/* An unsignaled write of len (<= caps.max_inline) bytes from src, inline:
 * what ibc_xport_write with IBC_XPORT_WR_INLINE and no SIGNALED does, by the
 * backend's shortest path where it has one (shm: one store into the peer's
 * mapping when nothing waits ahead of it to that peer; no send-queue slot),
 * else posted. */
static inline int ibc_xport_write_inline(struct ibc_xport *x, int peer, const void *src,
					 uint32_t len, uint64_t remote_addr, uint32_t rkey,
					 uint64_t wr_id)
{
	struct ibc_xport_sge sge = { (uintptr_t)src, len, 0 };
	int rc;

	if (x->ops->write_inline != NULL &&
	    x->ops->write_inline(x, peer, src, len, remote_addr, rkey, &rc))
		return rc;
	return ibc_xport_write(x, peer, &sge, 1, remote_addr, rkey, IBC_XPORT_WR_INLINE, wr_id);
}

static inline int ibc_xport_write_imm(struct ibc_xport *x, int peer,
				      const struct ibc_xport_sge *sge, int num_sge,
				      uint64_t remote_addr, uint32_t rkey, uint32_t imm,
				      unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_WRITE_IMM,
				   .flags = flags, .peer = peer, .num_sge = num_sge, .sge = sge,
				   .remote_addr = remote_addr, .rkey = rkey, .imm = imm };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

static inline int ibc_xport_read(struct ibc_xport *x, int peer, const struct ibc_xport_sge *sge,
				 int num_sge, uint64_t remote_addr, uint32_t rkey,
				 unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_READ, .flags = flags,
				   .peer = peer, .num_sge = num_sge, .sge = sge,
				   .remote_addr = remote_addr, .rkey = rkey };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

static inline int ibc_xport_send(struct ibc_xport *x, int peer, const struct ibc_xport_sge *sge,
				 int num_sge, unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_SEND, .flags = flags,
				   .peer = peer, .num_sge = num_sge, .sge = sge };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

/* result: 8-byte local sge receiving the old value */
static inline int ibc_xport_fadd(struct ibc_xport *x, int peer, const struct ibc_xport_sge *result,
				 uint64_t remote_addr, uint32_t rkey, uint64_t add,
				 unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_FETCH_ADD,
				   .flags = flags, .peer = peer, .num_sge = 1, .sge = result,
				   .remote_addr = remote_addr, .rkey = rkey, .compare_add = add };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

static inline int ibc_xport_cswap(struct ibc_xport *x, int peer,
				  const struct ibc_xport_sge *result, uint64_t remote_addr,
				  uint32_t rkey, uint64_t compare, uint64_t swap,
				  unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_CMP_SWAP,
				   .flags = flags, .peer = peer, .num_sge = 1, .sge = result,
				   .remote_addr = remote_addr, .rkey = rkey,
				   .compare_add = compare, .swap = swap };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

static inline int ibc_xport_mcast_send(struct ibc_xport *x, struct ibc_xport_mcast *g,
				       const struct ibc_xport_sge *sge, int num_sge,
				       unsigned flags, uint64_t wr_id)
{
	struct ibc_xport_wr wr = { .wr_id = wr_id, .opcode = IBC_XPORT_OP_MCAST_SEND,
				   .flags = flags, .peer = -1, .num_sge = num_sge, .sge = sge,
				   .mcast = g };
	int posted;
	return ibc_xport_post(x, &wr, 1, &posted);
}

static inline int ibc_xport_recv(struct ibc_xport *x, int peer, struct ibc_xport_mcast *g,
				 const struct ibc_xport_sge *sge, int num_sge, uint64_t wr_id)
{
	struct ibc_xport_recv_wr wr = { .wr_id = wr_id, .peer = peer, .mcast = g,
					.num_sge = num_sge, .sge = sge };
	int posted;
	return ibc_xport_recv_post(x, &wr, 1, &posted);
}

#endif
