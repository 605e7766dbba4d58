/* shm transport: every rank on one host, verbs semantics with plain memory.
 *
 * Each rank owns a control segment (POSIX shm, "<prefix>-r<rank>-c", prefix =
 * "/ibcx-<pid of rank 0>-<random>") that every peer maps during open; it is
 * unlinked at the end of open, so a crash leaves nothing in /dev/shm.  It holds:
 *   - the MR table: one entry per registration (rkey, range, access, kind, and for
 *     shared segments the owner's fd + inode); peers read it to check every remote
 *     access, so a bad rkey or range becomes an error completion, not a store;
 *   - receive rings: one per sending peer, one shared (IBC_XPORT_PEER_ANY) and one
 *     per joined multicast group slot.  The owner posts receive buffers at head;
 *     a sender claims the next one (CAS on claim), copies into it, fills in the
 *     completion and publishes it with a release store of done = seq + 1; the
 *     owner reports completions in ring order.
 * Multicast is one publish, as on a fabric with hardware multicast: a group is
 * a ring of SHM_GROUP_DEPTH datagram slots in its own segment
 * ("<prefix>-g<id>", made by the first member to join, unlinked at close);
 * a sender claims the next datagram number (fetch-add), copies the payload
 * into its slot once and publishes it (seq = number + 1, release), whatever
 * the number of members.  Each member reads the ring from where it joined,
 * at its own pace (in cq_poll), into its posted receives; a member that
 * falls SHM_GROUP_DEPTH datagrams behind loses the overwritten ones (counted
 * as mcast_overrun), as a UD receiver without buffers would.  mcast_drop
 * makes the member discard a datagram it reads (seeded), counted in the
 * group's and the process's drop counters.
 * mr_alloc memory lives in its own segment, mapped lazily by peers through
 * /proc/<owner>/fd/<fd> (the name is unlinked right after creation); when /proc
 * cannot be used, by name (then the name lives until dereg/close).  An RDMA write
 * is a store into the peer's memory: the target does nothing.  mr_reg memory of
 * another process is reached with process_vm_writev/readv.
 * Every WR to a peer runs at post time, in order; a SEND or WRITE_IMM that finds
 * no receive buffer (RNR) waits in a per-peer queue, and every later WR to that
 * peer waits behind it (order kept); the queue moves in post/poll/progress/wait. */
#define _GNU_SOURCE
#include "xport/xport.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

static const char *const reason_text[RS_COUNT] = {
	[RS_OK] = "success",
	[RS_BAD_RKEY] = "remote access error: invalid rkey",
	[RS_RANGE] = "remote access error: address range outside the registered region",
	[RS_DEREG] = "remote access error: memory region was deregistered",
	[RS_PERM] = "remote access error: region not registered for this access",
	[RS_LOCAL_PROT] = "local protection error: bad lkey, range or access of a local buffer",
	[RS_REM_INV_REQ] = "remote invalid request: message larger than the receive buffer",
	[RS_LOCAL_LEN] = "local length error: message larger than the receive buffer",
	[RS_ATOMIC_MEM] = "remote access error: atomics need 8-byte aligned shared (mr_alloc) memory",
	[RS_MAP] = "remote access error: cannot map the peer's segment",
	[RS_PVM] = "remote access error: process_vm access to the peer failed",
	[RS_FLUSH] = "work request flushed",
	[RS_REM_OP] = "remote operation error: the receive buffer is not valid (lkey, range or access)",
};

static int reason_status(int r)
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

static const char *reason_str(uint32_t r)
{
	return r < RS_COUNT ? reason_text[r] : "unknown error";
}

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
	struct ibc_xport_wr wr;
	struct ibc_xport_sge sge[IBC_XPORT_MAX_SGE];
	void *inline_buf;
};

/* The last mapped registration resolved at a peer: a later access with the
 * same key, while that key is still the entry's, goes straight to the
 * mapping (the key carries a generation: the same key is the same
 * registration).  Saves the entry's snapshot on the fast path. */
struct rcache {
	uint32_t key;
	unsigned access;
	const _Atomic uint32_t *live;  /* the entry's rkey word */
	uint64_t addr, len;            /* the registered range (owner's addresses) */
	char *base;                    /* where addr is mapped here */
};

struct peer {
	struct shm_ctl *ctl;
	size_t ctl_len;
	pid_t pid;
	struct seg_map *maps; /* SHM_MR_MAX entries, allocated on first use */
	struct pend *pend_head, *pend_tail;
	struct rcache rc;
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

/* a group's datagram ring (its own segment) */
struct grp_slot {
	_Alignas(CL) _Atomic uint64_t seq;  /* number + 1 once the datagram is in */
	uint32_t len;
	int32_t src;
	unsigned char data[SHM_MCAST_MTU];
};

struct grp_seg {
	_Atomic uint32_t magic;              /* set last by the creator */
	uint32_t id, depth, mtu;
	_Alignas(CL) _Atomic uint64_t head;  /* next datagram number */
	_Alignas(CL) struct grp_slot slots[SHM_GROUP_DEPTH];
};

struct group {
	struct ibc_xport_mcast pub;
	int slot;                 /* its receive ring in this process's control segment */
	struct grp_seg *seg;
	uint64_t cursor;          /* the next datagram number to read */
	int created;              /* this process made the segment (unlinks it at close) */
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
	/* send completion queue (grows; never overflows) */
	struct ibc_xport_wc *scq;
	size_t scq_cap, scq_head, scq_count;
	unsigned rr;          /* first ring polled next time */
	struct ibc_xport_stats stats;
};

/* ------------------------------------------------------------ helpers ---- */

static struct shm *st_of(struct ibc_xport *x)
{
	return x->priv;
}

static size_t ring_bytes(uint32_t depth)
{
	size_t b = sizeof(struct shm_ring) + (size_t)depth * sizeof(struct shm_slot);
	return (b + CL - 1) / CL * CL;
}

static struct shm_ring *ring_at(struct shm_ctl *c, size_t i)
{
	return (struct shm_ring *)((char *)c + c->ring_off + i * c->ring_stride);
}

/* ring indices: [0, size) receives from that sender, size = shared, size + 1 + g = group */
static size_t ring_srq(const struct shm_ctl *c)
{
	return c->size;
}

static size_t ring_group(const struct shm_ctl *c, int slot)
{
	return c->size + 1 + (size_t)slot;
}

static int rng_drop(struct shm *st, double p)
{
	return ibc_xport_drop_draw(&st->rng, p);
}

static int scq_push(struct shm *st, const struct ibc_xport_wc *wc)
{
	if (st->scq_count == st->scq_cap) {
		size_t ncap = st->scq_cap ? st->scq_cap * 2 : 256;
		struct ibc_xport_wc *n = malloc(ncap * sizeof(*n));
		if (n == NULL) {
			ibc_error("shm: out of memory for the completion queue");
			return IBC_ERR_NOMEM;
		}
		for (size_t i = 0; i < st->scq_count; i++)
			n[i] = st->scq[(st->scq_head + i) % st->scq_cap];
		free(st->scq);
		st->scq = n;
		st->scq_cap = ncap;
		st->scq_head = 0;
	}
	st->scq[(st->scq_head + st->scq_count) % st->scq_cap] = *wc;
	st->scq_count++;
	return IBC_OK;
}

static int complete_send(struct shm *st, const struct ibc_xport_wr *wr, int reason,
			 uint32_t byte_len)
{
	struct ibc_xport_wc wc;

	if (reason == RS_OK && !(wr->flags & IBC_XPORT_WR_SIGNALED))
		return IBC_OK;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr->wr_id;
	wc.status = reason_status(reason);
	wc.opcode = wr->opcode;
	wc.byte_len = byte_len;
	wc.peer = wr->opcode == IBC_XPORT_OP_MCAST_SEND ? -1 : wr->peer;
	wc.reason = reason_str((uint32_t)reason);
	return scq_push(st, &wc);
}

/* ---------------------------------------------------- segment mapping ---- */

static int seg_create(const char *name, size_t len, int *fd_out, void **map_out,
		      struct stat *sb)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	void *m;

	if (fd < 0) {
		ibc_error("shm: shm_open(%s): %s", name, strerror(errno));
		return IBC_ERR_SYS;
	}
	if (ftruncate(fd, (off_t)len) != 0) {
		ibc_error("shm: ftruncate(%s, %zu): %s", name, len, strerror(errno));
		goto err_unlink;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		ibc_error("shm: mmap(%s, %zu): %s", name, len, strerror(errno));
		goto err_unlink;
	}
	if (fstat(fd, sb) != 0) {
		ibc_error("shm: fstat(%s): %s", name, strerror(errno));
		munmap(m, len);
		goto err_unlink;
	}
	*fd_out = fd;
	*map_out = m;
	return IBC_OK;

err_unlink:
	close(fd);
	shm_unlink(name);
	return IBC_ERR_SYS;
}

/* Opens a peer's segment through /proc (procfd) or by name; checks the inode. */
static int seg_open_peer(struct shm *st, pid_t pid, int fd, const char *name, uint64_t ino,
			 uint64_t dev, size_t len, int try_proc, void **out)
{
	char path[96];
	struct stat sb;
	int pfd = -1;
	void *m;

	if (try_proc) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		pfd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (pfd < 0 && name != NULL)
		pfd = shm_open(name, O_RDWR, 0600);
	if (pfd < 0)
		return IBC_ERR_SYS;
	if (fstat(pfd, &sb) != 0 || (uint64_t)sb.st_ino != ino || (uint64_t)sb.st_dev != dev ||
	    (size_t)sb.st_size < len) {
		close(pfd);
		return IBC_ERR_NOTFOUND;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	close(pfd);
	if (m == MAP_FAILED)
		return IBC_ERR_SYS;
	(void)st;
	*out = m;
	return IBC_OK;
}

/* ------------------------------------------------------- resolution ------ */

enum { T_PTR = 1, T_PVM = 2 };

struct target {
	int kind;
	char *ptr;        /* T_PTR */
	uint64_t raddr;   /* T_PVM */
	pid_t pid;
	uint64_t len;
};

struct ent_snap {
	uint32_t access, kind, seq;
	int32_t fd;
	uint64_t addr, len, seg_len, ino, dev;
};

static void *peer_seg_map(struct shm *st, int peer, uint32_t idx, uint32_t key,
			  const struct ent_snap *e)
{
	struct peer *p = &st->peers[peer];
	struct seg_map *m;
	char name[SHM_NAME_MAX];
	void *base;

	if (p->maps == NULL) {
		p->maps = calloc(SHM_MR_MAX, sizeof(*p->maps));
		if (p->maps == NULL)
			return NULL;
	}
	m = &p->maps[idx];
	if (m->base != NULL && m->rkey == key)
		return m->base;
	if (m->base != NULL) {
		munmap(m->base, m->len);
		m->base = NULL;
		m->rkey = 0;
	}
	snprintf(name, sizeof(name), "%s-r%d-m%u", st->prefix, peer, e->seq);
	if (seg_open_peer(st, p->pid, e->fd, st->procfd ? NULL : name, e->ino, e->dev,
			  e->seg_len, st->procfd, &base) != IBC_OK)
		return NULL;
	m->base = base;
	m->len = e->seg_len;
	m->rkey = key;
	return base;
}

/* Checks [addr, addr + len) against peer's registration key with access need;
 * fills t or returns a reason. */
static int resolve(struct shm *st, int peer, int self, uint32_t key, uint64_t addr,
		   uint64_t len, unsigned need, struct target *t)
{
	struct shm_ctl *c = st->peers[peer].ctl;
	struct rcache *rc = &st->peers[peer].rc;
	struct shm_mr_ent *ent;
	struct ent_snap e;
	uint32_t idx, k;

	if (key == 0)
		return RS_BAD_RKEY;
	if (key == rc->key && !self && (rc->access & need) == need && addr >= rc->addr &&
	    len <= rc->len && addr - rc->addr <= rc->len - len &&
	    atomic_load_explicit(rc->live, memory_order_acquire) == key) {
		t->kind = T_PTR;
		t->ptr = rc->base + (addr - rc->addr);
		t->len = len;
		t->pid = st->peers[peer].pid;
		return RS_OK;
	}
	idx = (key ^ c->salt) & SHM_MR_IDX_MASK;
	ent = &c->mrs[idx];
	k = atomic_load_explicit(&ent->rkey, memory_order_acquire);
	if (k != key)
		return atomic_load_explicit(&ent->dead_rkey, memory_order_relaxed) == key ?
			       RS_DEREG : RS_BAD_RKEY;
	e.access = ent->access;
	e.kind = ent->kind;
	e.seq = ent->seq;
	e.fd = ent->fd;
	e.addr = ent->addr;
	e.len = ent->len;
	e.seg_len = ent->seg_len;
	e.ino = ent->ino;
	e.dev = ent->dev;
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&ent->rkey, memory_order_relaxed) != key)
		return RS_DEREG;
	if ((e.access & need) != need)
		return RS_PERM;
	if (addr < e.addr || len > e.len || addr - e.addr > e.len - len)
		return RS_RANGE;
	t->len = len;
	t->pid = st->peers[peer].pid;
	if (self) {
		t->kind = T_PTR;
		t->ptr = (char *)(uintptr_t)addr;
		return RS_OK;
	}
	if (e.kind == SHM_KIND_SEG) {
		char *base = peer_seg_map(st, peer, idx, key, &e);
		if (base == NULL)
			return atomic_load_explicit(&ent->rkey, memory_order_acquire) == key ? RS_MAP
											   : RS_DEREG;
		t->kind = T_PTR;
		t->ptr = base + (addr - e.addr);
		*rc = (struct rcache){ .key = key, .access = e.access, .live = &ent->rkey,
				       .addr = e.addr, .len = e.len, .base = base };
		return RS_OK;
	}
	t->kind = T_PVM;
	t->raddr = addr;
	return RS_OK;
}

/* Local sges: each must lie in one of this process's registrations with access
 * need; builds the iovec list.  Inline WRs skip the key check. */
static int local_iov(struct shm *st, const struct ibc_xport_wr *wr, unsigned need,
		     struct iovec *iov, uint64_t *total)
{
	uint64_t sum = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibc_xport_sge *s = &wr->sge[i];
		iov[i].iov_base = (void *)(uintptr_t)s->addr;
		iov[i].iov_len = s->len;
		sum += s->len;
		if (wr->flags & IBC_XPORT_WR_INLINE)
			continue;
		if (s->len == 0)
			continue;
		{
			uint32_t idx = (s->lkey ^ st->me->salt) & SHM_MR_IDX_MASK;
			struct own_mr *m = st->mrs[idx];
			uint64_t base;
			if (m == NULL || m->pub.lkey != s->lkey || (m->pub.access & need) != need)
				return RS_LOCAL_PROT;
			base = (uint64_t)(uintptr_t)m->pub.addr;
			if (s->addr < base || s->len > m->pub.len || s->addr - base > m->pub.len - s->len)
				return RS_LOCAL_PROT;
		}
	}
	*total = sum;
	return RS_OK;
}

/* ----------------------------------------------------- data movement ---- */

typedef ssize_t (*pvm_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
			  unsigned long, unsigned long);

/* Moves len bytes between the local iov list and [raddr, raddr+len) of pid with
 * process_vm_writev (write) or process_vm_readv (read), resuming after short
 * transfers. */
static int pvm_copy(pvm_fn fn, pid_t pid, const struct iovec *liov, int n, uint64_t raddr,
		    uint64_t len)
{
	struct iovec riov;
	uint64_t done = 0;
	struct iovec tmp[IBC_XPORT_MAX_SGE];
	int cnt = n;

	memcpy(tmp, liov, (size_t)n * sizeof(*liov));
	while (done < len) {
		ssize_t w;
		riov.iov_base = (void *)(uintptr_t)(raddr + done);
		riov.iov_len = len - done;
		w = fn(pid, tmp + (n - cnt), (unsigned long)cnt, &riov, 1, 0);
		if (w <= 0)
			return RS_PVM;
		done += (uint64_t)w;
		/* skip what was moved */
		while (w > 0 && cnt > 0) {
			struct iovec *v = &tmp[n - cnt];
			if ((size_t)w >= v->iov_len) {
				w -= (ssize_t)v->iov_len;
				cnt--;
			} else {
				v->iov_base = (char *)v->iov_base + w;
				v->iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	return RS_OK;
}

/* gather local iov -> one target range */
static int copy_to(const struct target *t, const struct iovec *iov, int n, uint64_t total)
{
	if (total == 0)
		return RS_OK;
	if (t->kind == T_PTR) {
		char *d = t->ptr;
		if (total == 8 && n == 1 && ((uintptr_t)d & 7) == 0) {
			/* a flag word: one untorn store, as a waiter (wait_u64) expects */
			uint64_t v;
			memcpy(&v, iov[0].iov_base, 8);
			__atomic_store_n((uint64_t *)(void *)d, v, __ATOMIC_RELEASE);
			return RS_OK;
		}
		for (int i = 0; i < n; i++) {
			memcpy(d, iov[i].iov_base, iov[i].iov_len);
			d += iov[i].iov_len;
		}
		return RS_OK;
	}
	return pvm_copy(process_vm_writev, t->pid, iov, n, t->raddr, total);
}

/* one target range -> scatter local iov */
static int copy_from(const struct target *t, const struct iovec *iov, int n, uint64_t total)
{
	if (total == 0)
		return RS_OK;
	if (t->kind == T_PTR) {
		const char *s = t->ptr;
		for (int i = 0; i < n; i++) {
			memcpy(iov[i].iov_base, s, iov[i].iov_len);
			s += iov[i].iov_len;
		}
		return RS_OK;
	}
	return pvm_copy(process_vm_readv, t->pid, iov, n, t->raddr, total);
}

/* gather local iov -> scatter over several target ranges (a receive's sges) */
static int copy_scatter(const struct target *dst, int ndst, const struct iovec *iov, int n,
			uint64_t total)
{
	struct iovec part[IBC_XPORT_MAX_SGE];
	int si = 0;
	size_t soff = 0;
	uint64_t left = total;

	for (int d = 0; d < ndst && left > 0; d++) {
		uint64_t want = dst[d].len < left ? dst[d].len : left;
		uint64_t got = 0;
		int np = 0;
		struct target t = dst[d];
		int r;

		while (got < want && si < n) {
			size_t avail = iov[si].iov_len - soff;
			size_t take = avail < want - got ? avail : (size_t)(want - got);
			if (take > 0) {
				part[np].iov_base = (char *)iov[si].iov_base + soff;
				part[np].iov_len = take;
				np++;
			}
			got += take;
			soff += take;
			if (soff == iov[si].iov_len) {
				si++;
				soff = 0;
			}
			if (np == IBC_XPORT_MAX_SGE && got < want) {
				/* flush this batch and go on with the rest of the range */
				r = copy_to(&t, part, np, got);
				if (r != RS_OK)
					return r;
				if (t.kind == T_PTR)
					t.ptr += got;
				else
					t.raddr += got;
				want -= got;
				left -= got;
				got = 0;
				np = 0;
			}
		}
		r = copy_to(&t, part, np, got);
		if (r != RS_OK)
			return r;
		left -= got;
	}
	return RS_OK;
}

/* ---------------------------------------------------------- rings -------- */

/* Claims the next posted receive of ring r; NULL when none (RNR). */
static struct shm_slot *ring_claim(struct shm_ring *r, uint64_t *seq)
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

static void slot_finish(struct shm_slot *s, uint64_t seq, int reason, uint32_t opcode,
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

/* Delivers the gathered payload into a claimed receive of ctl owner 'peer'.
 * Returns the sender-side reason. */
static int deliver(struct shm *st, int peer, struct shm_slot *s, uint64_t seq,
		   const struct iovec *iov, int n, uint64_t total, uint32_t opcode,
		   uint32_t imm, uint32_t flags)
{
	struct target dst[IBC_XPORT_MAX_SGE];
	uint64_t cap = 0;
	uint32_t ns = s->num_sge;
	int r;

	if (ns > IBC_XPORT_MAX_SGE)
		ns = IBC_XPORT_MAX_SGE;
	for (uint32_t i = 0; i < ns; i++) {
		if (s->sge[i].len == 0) {
			dst[i].len = 0;
			dst[i].kind = T_PTR;
			dst[i].ptr = NULL;
			continue;
		}
		r = resolve(st, peer, peer == (int)st->me->rank, s->sge[i].lkey, s->sge[i].addr,
			    s->sge[i].len, IBC_XPORT_ACCESS_LOCAL_WRITE, &dst[i]);
		if (r != RS_OK) {
			slot_finish(s, seq, RS_LOCAL_PROT, opcode, 0, imm, flags,
				    (int)st->me->rank);
			return RS_REM_OP;
		}
		cap += s->sge[i].len;
	}
	if (total > cap) {
		slot_finish(s, seq, RS_LOCAL_LEN, opcode, 0, imm, flags, (int)st->me->rank);
		return RS_REM_INV_REQ;
	}
	r = copy_scatter(dst, (int)ns, iov, n, total);
	if (r != RS_OK) {
		slot_finish(s, seq, RS_LOCAL_PROT, opcode, 0, imm, flags, (int)st->me->rank);
		return r;
	}
	atomic_thread_fence(memory_order_release);
	slot_finish(s, seq, RS_OK, opcode, (uint32_t)total, imm, flags, (int)st->me->rank);
	return RS_OK;
}

/* A receive for a SEND / WRITE_IMM from me at peer: its ring for me, else its
 * shared ring. */
static struct shm_slot *claim_p2p(struct shm *st, int peer, uint64_t *seq)
{
	struct shm_ctl *c = st->peers[peer].ctl;
	struct shm_slot *s = ring_claim(ring_at(c, st->me->rank), seq);
	if (s == NULL)
		s = ring_claim(ring_at(c, ring_srq(c)), seq);
	return s;
}

/* ------------------------------------------------------- execution ------ */

enum { EXEC_DONE = 0, EXEC_RNR = 1 };

/* One publish into the group's ring, whatever the number of members. */
static int exec_mcast(struct shm *st, struct ibc_xport *x, const struct ibc_xport_wr *wr)
{
	struct iovec iov[IBC_XPORT_MAX_SGE];
	struct group *g = wr->mcast->priv;
	struct grp_slot *slot;
	uint64_t total, n;
	unsigned char *d;
	int r = local_iov(st, wr, 0, iov, &total);

	if (r != RS_OK)
		return complete_send(st, wr, r, 0);
	n = atomic_fetch_add_explicit(&g->seg->head, 1, memory_order_acq_rel);
	slot = &g->seg->slots[n % SHM_GROUP_DEPTH];
	/* readers of the slot's previous lap see it change under them */
	atomic_store_explicit(&slot->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	d = slot->data;
	for (int i = 0; i < wr->num_sge; i++) {
		memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
	slot->len = (uint32_t)total;
	slot->src = x->rank;
	atomic_store_explicit(&slot->seq, n + 1, memory_order_release);
	return complete_send(st, wr, RS_OK, (uint32_t)total);
}

/* A member reads the datagrams published since its cursor into its posted
 * receives (in order; a datagram waits in the ring for a receive buffer). */
static void group_pull(struct shm *st, struct ibc_xport *x, struct group *g)
{
	struct shm_ring *rr = ring_at(st->me, ring_group(st->me, g->slot));

	for (;;) {
		struct grp_slot *gs = &g->seg->slots[g->cursor % SHM_GROUP_DEPTH];
		uint64_t v = atomic_load_explicit(&gs->seq, memory_order_acquire), seq;
		struct shm_slot *rs;
		struct iovec iov;
		uint32_t len;
		int src;

		if (v > g->cursor + 1) {
			/* overwritten: this member fell a whole ring behind */
			st->stats.mcast_overrun += v - 1 - g->cursor;
			ibc_debug("shm: group %#x: %llu datagrams overwritten before this member read them",
				  g->pub.id, (unsigned long long)(v - 1 - g->cursor));
			g->cursor = v - 1;
			continue;
		}
		if (v != g->cursor + 1)
			return; /* nothing new (or being written) */
		len = gs->len;
		src = gs->src;
		if (len > SHM_MCAST_MTU)
			len = SHM_MCAST_MTU;
		memcpy(g->bounce, gs->data, len);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&gs->seq, memory_order_relaxed) != v)
			continue; /* overwritten while copied: the check above counts it */
		if (src == x->rank && !x->caps.mcast_loopback) {
			g->cursor++;
			continue;
		}
		if (rng_drop(st, x->params.mcast_drop)) {
			g->pub.dropped++;
			st->stats.mcast_dropped++;
			g->cursor++;
			continue;
		}
		rs = ring_claim(rr, &seq);
		if (rs == NULL)
			return; /* no receive posted yet: it waits in the ring */
		iov.iov_base = g->bounce;
		iov.iov_len = len;
		(void)deliver(st, x->rank, rs, seq, &iov, 1, len, IBC_XPORT_OP_MCAST_RECV, 0, 0);
		g->cursor++;
	}
}

static int exec_wr(struct shm *st, struct ibc_xport *x, const struct ibc_xport_wr *wr,
		   int *res)
{
	struct iovec iov[IBC_XPORT_MAX_SGE];
	struct target t;
	uint64_t total = 0, seq = 0;
	struct shm_slot *slot;
	int self = wr->peer == x->rank;
	int r;

	*res = EXEC_DONE;
	switch (wr->opcode) {
	case IBC_XPORT_OP_WRITE:
	case IBC_XPORT_OP_WRITE_IMM:
		r = local_iov(st, wr, 0, iov, &total);
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		r = resolve(st, wr->peer, self, wr->rkey, wr->remote_addr, total,
			    IBC_XPORT_ACCESS_REMOTE_WRITE, &t);
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		slot = NULL;
		if (wr->opcode == IBC_XPORT_OP_WRITE_IMM) {
			slot = claim_p2p(st, wr->peer, &seq);
			if (slot == NULL) {
				*res = EXEC_RNR;
				return IBC_OK;
			}
		}
		r = copy_to(&t, iov, wr->num_sge, total);
		atomic_thread_fence(memory_order_release);
		if (slot != NULL)
			slot_finish(slot, seq, r == RS_OK ? RS_OK : RS_FLUSH,
				    IBC_XPORT_OP_RECV_WRITE_IMM, (uint32_t)total, wr->imm,
				    IBC_XPORT_WC_IMM, x->rank);
		return complete_send(st, wr, r, (uint32_t)total);

	case IBC_XPORT_OP_READ:
		r = local_iov(st, wr, IBC_XPORT_ACCESS_LOCAL_WRITE, iov, &total);
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		r = resolve(st, wr->peer, self, wr->rkey, wr->remote_addr, total,
			    IBC_XPORT_ACCESS_REMOTE_READ, &t);
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		atomic_thread_fence(memory_order_acquire);
		r = copy_from(&t, iov, wr->num_sge, total);
		return complete_send(st, wr, r, (uint32_t)total);

	case IBC_XPORT_OP_SEND:
	case IBC_XPORT_OP_SEND_IMM:
		r = local_iov(st, wr, 0, iov, &total);
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		if (rng_drop(st, x->params.p2p_drop)) {
			st->stats.p2p_dropped++;
			return complete_send(st, wr, RS_OK, (uint32_t)total);
		}
		slot = claim_p2p(st, wr->peer, &seq);
		if (slot == NULL) {
			*res = EXEC_RNR;
			return IBC_OK;
		}
		r = deliver(st, wr->peer, slot, seq, iov, wr->num_sge, total, IBC_XPORT_OP_RECV,
			    wr->opcode == IBC_XPORT_OP_SEND_IMM ? wr->imm : 0,
			    wr->opcode == IBC_XPORT_OP_SEND_IMM ? IBC_XPORT_WC_IMM : 0);
		return complete_send(st, wr, r, (uint32_t)total);

	case IBC_XPORT_OP_FETCH_ADD:
	case IBC_XPORT_OP_CMP_SWAP: {
		uint64_t old;
		r = local_iov(st, wr, IBC_XPORT_ACCESS_LOCAL_WRITE, iov, &total);
		if (r == RS_OK && total != 8)
			r = RS_LOCAL_PROT;
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		r = resolve(st, wr->peer, self, wr->rkey, wr->remote_addr, 8,
			    IBC_XPORT_ACCESS_REMOTE_ATOMIC, &t);
		if (r != RS_OK)
			return complete_send(st, wr, r, 0);
		if (t.kind != T_PTR || (wr->remote_addr & 7) != 0)
			return complete_send(st, wr, RS_ATOMIC_MEM, 0);
		if (wr->opcode == IBC_XPORT_OP_FETCH_ADD) {
			old = __atomic_fetch_add((uint64_t *)(void *)t.ptr, wr->compare_add,
						 __ATOMIC_SEQ_CST);
		} else {
			old = wr->compare_add;
			__atomic_compare_exchange_n((uint64_t *)(void *)t.ptr, &old, wr->swap, 0,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		}
		memcpy(iov[0].iov_base, &old, 8);
		return complete_send(st, wr, RS_OK, 8);
	}

	case IBC_XPORT_OP_MCAST_SEND:
		return exec_mcast(st, x, wr);

	default:
		break;
	}
	return complete_send(st, wr, RS_LOCAL_PROT, 0);
}

/* --------------------------------------------------- pending queue ------- */

static int pend_add(struct shm *st, int peer, const struct ibc_xport_wr *wr)
{
	struct pend *p = calloc(1, sizeof(*p));
	struct peer *pp = &st->peers[peer];

	if (p == NULL) {
		ibc_error("shm: out of memory queueing a work request");
		return IBC_ERR_NOMEM;
	}
	p->wr = *wr;
	if (wr->num_sge > 0)
		memcpy(p->sge, wr->sge, (size_t)wr->num_sge * sizeof(*wr->sge));
	p->wr.sge = p->sge;
	if ((wr->flags & IBC_XPORT_WR_INLINE) && wr->num_sge > 0) {
		size_t tot = 0, off = 0;
		for (int i = 0; i < wr->num_sge; i++)
			tot += wr->sge[i].len;
		p->inline_buf = malloc(tot ? tot : 1);
		if (p->inline_buf == NULL) {
			free(p);
			ibc_error("shm: out of memory queueing an inline work request");
			return IBC_ERR_NOMEM;
		}
		for (int i = 0; i < wr->num_sge; i++) {
			memcpy((char *)p->inline_buf + off, (const void *)(uintptr_t)wr->sge[i].addr,
			       wr->sge[i].len);
			off += wr->sge[i].len;
		}
		p->sge[0].addr = (uint64_t)(uintptr_t)p->inline_buf;
		p->sge[0].len = (uint32_t)tot;
		p->sge[0].lkey = 0;
		p->wr.num_sge = 1;
	}
	if (pp->pend_tail != NULL)
		pp->pend_tail->next = p;
	else
		pp->pend_head = p;
	pp->pend_tail = p;
	st->npending++;
	return IBC_OK;
}

static int shm_progress(struct ibc_xport *x)
{
	struct shm *st = st_of(x);

	if (st->npending == 0)
		return IBC_OK;
	for (int i = 0; i < x->size; i++) {
		struct peer *pp = &st->peers[i];
		while (pp->pend_head != NULL) {
			struct pend *p = pp->pend_head;
			int res, rc = exec_wr(st, x, &p->wr, &res);
			if (rc != IBC_OK)
				return rc;
			if (res == EXEC_RNR)
				break;
			pp->pend_head = p->next;
			if (pp->pend_head == NULL)
				pp->pend_tail = NULL;
			free(p->inline_buf);
			free(p);
			st->npending--;
		}
	}
	return IBC_OK;
}

/* ---------------------------------------------------------- post -------- */

static int wr_check(struct ibc_xport *x, const struct ibc_xport_wr *wr, int i)
{
	uint64_t total = 0;

	if ((int)wr->opcode < 0 || wr->opcode > IBC_XPORT_OP_MCAST_SEND) {
		ibc_error("shm: post: wr %d: opcode %d cannot be posted", i, (int)wr->opcode);
		return IBC_ERR_INVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > (int)x->caps.max_sge ||
	    (wr->num_sge > 0 && wr->sge == NULL)) {
		ibc_error("shm: post: wr %d: %d sges (max %u)", i, wr->num_sge, x->caps.max_sge);
		return IBC_ERR_INVAL;
	}
	for (int k = 0; k < wr->num_sge; k++)
		total += wr->sge[k].len;
	if (total > SHM_MAX_MSG) {
		ibc_error("shm: post: wr %d: %llu bytes exceed the maximum message", i,
			  (unsigned long long)total);
		return IBC_ERR_INVAL;
	}
	if ((wr->flags & IBC_XPORT_WR_INLINE) && total > x->caps.max_inline) {
		ibc_error("shm: post: wr %d: inline payload %llu > max_inline %u", i,
			  (unsigned long long)total, x->caps.max_inline);
		return IBC_ERR_INVAL;
	}
	if (wr->opcode == IBC_XPORT_OP_MCAST_SEND) {
		if (wr->mcast == NULL || wr->mcast->priv == NULL) {
			ibc_error("shm: post: wr %d: multicast send without a joined group", i);
			return IBC_ERR_INVAL;
		}
		if (total > wr->mcast->mtu) {
			ibc_error("shm: post: wr %d: datagram of %llu bytes > group mtu %u", i,
				  (unsigned long long)total, wr->mcast->mtu);
			return IBC_ERR_INVAL;
		}
		return IBC_OK;
	}
	if (wr->peer < 0 || wr->peer >= x->size) {
		ibc_error("shm: post: wr %d: peer %d out of range (size %d)", i, wr->peer, x->size);
		return IBC_ERR_INVAL;
	}
	if (!x->connected) {
		ibc_error("shm: post: wr %d: not connected (call ibc_xport_connect first)", i);
		return IBC_ERR_INVAL;
	}
	if ((wr->opcode == IBC_XPORT_OP_FETCH_ADD || wr->opcode == IBC_XPORT_OP_CMP_SWAP) &&
	    (wr->num_sge != 1 || wr->sge[0].len != 8)) {
		ibc_error("shm: post: wr %d: atomics take one 8-byte result sge", i);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

static int shm_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted)
{
	struct shm *st = st_of(x);
	int rc;

	st->stats.post_calls++;
	rc = shm_progress(x);
	if (rc != IBC_OK)
		return rc;
	for (int i = 0; i < n; i++) {
		const struct ibc_xport_wr *wr = &wrs[i];
		int res;

		rc = wr_check(x, wr, i);
		if (rc != IBC_OK)
			return rc;
		if (wr->opcode != IBC_XPORT_OP_MCAST_SEND &&
		    st->peers[wr->peer].pend_head != NULL) {
			rc = pend_add(st, wr->peer, wr);
		} else {
			rc = exec_wr(st, x, wr, &res);
			if (rc == IBC_OK && res == EXEC_RNR) {
				st->stats.rnr_waits++;
				rc = pend_add(st, wr->peer, wr);
			}
		}
		if (rc != IBC_OK)
			return rc;
		st->stats.posted++;
		(*posted)++;
	}
	return IBC_OK;
}

static int shm_recv_post(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
			 int *posted)
{
	struct shm *st = st_of(x);

	for (int i = 0; i < n; i++) {
		const struct ibc_xport_recv_wr *wr = &wrs[i];
		struct shm_ring *r;
		struct shm_slot *s;
		uint64_t h;

		if (wr->num_sge < 0 || wr->num_sge > (int)x->caps.max_sge ||
		    (wr->num_sge > 0 && wr->sge == NULL)) {
			ibc_error("shm: recv_post: wr %d: %d sges (max %u)", i, wr->num_sge,
				  x->caps.max_sge);
			return IBC_ERR_INVAL;
		}
		if (wr->mcast != NULL) {
			struct group *g = wr->mcast->priv;
			if (g == NULL) {
				ibc_error("shm: recv_post: wr %d: group not joined", i);
				return IBC_ERR_INVAL;
			}
			r = ring_at(st->me, ring_group(st->me, g->slot));
		} else if (wr->peer == IBC_XPORT_PEER_ANY) {
			r = ring_at(st->me, ring_srq(st->me));
		} else if (wr->peer >= 0 && wr->peer < x->size) {
			r = ring_at(st->me, (size_t)wr->peer);
		} else {
			ibc_error("shm: recv_post: wr %d: peer %d out of range", i, wr->peer);
			return IBC_ERR_INVAL;
		}
		h = atomic_load_explicit(&r->head, memory_order_relaxed);
		if (h - r->tail >= r->depth)
			return IBC_ERR_AGAIN;
		s = &r->slots[h % r->depth];
		s->wr_id = wr->wr_id;
		s->num_sge = (uint32_t)wr->num_sge;
		for (int k = 0; k < wr->num_sge; k++) {
			s->sge[k].addr = wr->sge[k].addr;
			s->sge[k].len = wr->sge[k].len;
			s->sge[k].lkey = wr->sge[k].lkey;
		}
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
		(*posted)++;
	}
	return IBC_OK;
}

/* --------------------------------------------------------- poll -------- */

static int ring_poll(struct shm_ring *r, int max, struct ibc_xport_wc *wc)
{
	int n = 0;

	while (n < max) {
		uint64_t t = r->tail;
		struct shm_slot *s;
		if (t >= atomic_load_explicit(&r->head, memory_order_relaxed))
			break;
		s = &r->slots[t % r->depth];
		if (atomic_load_explicit(&s->done, memory_order_acquire) != t + 1)
			break;
		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = s->wr_id;
		wc[n].status = s->status;
		wc[n].opcode = (enum ibc_xport_opcode)s->opcode;
		wc[n].byte_len = s->byte_len;
		wc[n].imm = s->imm;
		wc[n].flags = s->flags;
		wc[n].peer = s->src;
		wc[n].reason = reason_str(s->reason);
		r->tail = t + 1;
		n++;
	}
	return n;
}

static int shm_cq_poll(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n)
{
	struct shm *st = st_of(x);
	int got = 0;
	int rc = shm_progress(x);

	if (rc != IBC_OK)
		return rc;
	if (cq & IBC_XPORT_CQ_SEND) {
		while (got < max && st->scq_count > 0) {
			wc[got++] = st->scq[st->scq_head];
			st->scq_head = (st->scq_head + 1) % st->scq_cap;
			st->scq_count--;
		}
	}
	if ((cq & IBC_XPORT_CQ_RECV) && got < max) {
		size_t nr = (size_t)x->size + 1 + SHM_MCAST_SLOTS;

		for (int g = 0; g < SHM_MCAST_SLOTS; g++)
			if (st->groups[g] != NULL)
				group_pull(st, x, st->groups[g]);
		size_t start = st->rr++ % nr;
		for (size_t k = 0; k < nr && got < max; k++) {
			size_t i = (start + k) % nr;
			if (i >= (size_t)x->size + 1 && st->groups[i - (size_t)x->size - 1] == NULL)
				continue;
			got += ring_poll(ring_at(st->me, i), max - got, wc + got);
		}
	}
	*n = got;
	return IBC_OK;
}

/* ------------------------------------------------------ memory --------- */

static int mr_slot(struct shm *st, int *idx)
{
	for (int i = 0; i < SHM_MR_MAX; i++) {
		if (st->mrs[i] == NULL) {
			*idx = i;
			return IBC_OK;
		}
	}
	ibc_error("shm: too many memory registrations (max %d)", SHM_MR_MAX);
	return IBC_ERR_NOMEM;
}

static uint32_t mr_key(struct shm *st, int idx)
{
	uint32_t key;

	do {
		st->gen[idx] = (st->gen[idx] + 1) & ((1u << (32 - SHM_MR_IDX_BITS)) - 1);
		if (st->gen[idx] == 0)
			st->gen[idx] = 1;
		key = ((st->gen[idx] << SHM_MR_IDX_BITS) | (uint32_t)idx) ^ st->me->salt;
	} while (key == 0);
	return key;
}

static void mr_publish(struct shm *st, struct own_mr *m, unsigned access,
		       const struct stat *sb, uint32_t seq)
{
	struct shm_mr_ent *e = &st->me->mrs[m->idx];
	uint32_t key = mr_key(st, m->idx);

	e->access = access;
	e->kind = (uint32_t)m->kind;
	e->addr = (uint64_t)(uintptr_t)m->pub.addr;
	e->len = m->pub.len;
	e->seg_len = m->map_len;
	e->ino = sb != NULL ? (uint64_t)sb->st_ino : 0;
	e->dev = sb != NULL ? (uint64_t)sb->st_dev : 0;
	e->fd = m->fd;
	e->seq = seq;
	atomic_store_explicit(&e->rkey, key, memory_order_release);

	m->pub.lkey = key;
	m->pub.rkey = key;
	m->pub.access = access;
	memset(&m->pub.rdesc, 0, sizeof(m->pub.rdesc));
	m->pub.rdesc.addr = e->addr;
	m->pub.rdesc.len = e->len;
	m->pub.rdesc.rkey = key;
	m->pub.rdesc.rank = st->me->rank;
	m->pub.rdesc.flags = (uint32_t)m->kind;
	m->pub.priv = m;
	st->mrs[m->idx] = m;
	st->stats.mrs++;
	st->stats.mr_bytes += m->pub.len;
}

static int shm_mr_reg(struct ibc_xport *x, void *addr, size_t len, unsigned access,
		      struct ibc_xport_mr **out)
{
	struct shm *st = st_of(x);
	struct own_mr *m;
	int idx, rc = mr_slot(st, &idx);

	if (rc != IBC_OK)
		return rc;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		ibc_error("shm: out of memory registering %zu bytes", len);
		return IBC_ERR_NOMEM;
	}
	m->idx = idx;
	m->kind = SHM_KIND_USER;
	m->fd = -1;
	m->pub.addr = addr;
	m->pub.len = len;
	mr_publish(st, m, access, NULL, 0);
	*out = &m->pub;
	return IBC_OK;
}

static int shm_mr_alloc(struct ibc_xport *x, size_t len, unsigned access,
			struct ibc_xport_mr **out)
{
	struct shm *st = st_of(x);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t seg_len = (len + pg - 1) / pg * pg;
	struct own_mr *m;
	struct stat sb;
	uint32_t seq;
	int idx, rc = mr_slot(st, &idx);

	if (rc != IBC_OK)
		return rc;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		ibc_error("shm: out of memory allocating %zu bytes", len);
		return IBC_ERR_NOMEM;
	}
	seq = ++st->seg_seq;
	snprintf(m->name, sizeof(m->name), "%s-r%d-m%u", st->prefix, x->rank, seq);
	rc = seg_create(m->name, seg_len, &m->fd, &m->map, &sb);
	if (rc != IBC_OK)
		goto err_free_mr;
	if (st->procfd) {
		shm_unlink(m->name); /* peers open it through /proc/<pid>/fd */
	} else {
		m->named = 1;
	}
	m->idx = idx;
	m->kind = SHM_KIND_SEG;
	m->map_len = seg_len;
	m->pub.addr = m->map;
	m->pub.len = len;
	mr_publish(st, m, access, &sb, seq);
	*out = &m->pub;
	return IBC_OK;

err_free_mr:
	free(m);
	return rc;
}

static void mr_release(struct shm *st, struct own_mr *m)
{
	struct shm_mr_ent *e = &st->me->mrs[m->idx];
	uint32_t key = atomic_load_explicit(&e->rkey, memory_order_relaxed);

	atomic_store_explicit(&e->dead_rkey, key, memory_order_relaxed);
	atomic_store_explicit(&e->rkey, 0, memory_order_release);
	st->mrs[m->idx] = NULL;
	st->stats.mrs--;
	st->stats.mr_bytes -= m->pub.len;
	if (m->kind == SHM_KIND_SEG) {
		munmap(m->map, m->map_len);
		close(m->fd);
		if (m->named)
			shm_unlink(m->name);
	}
	free(m);
}

static int shm_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr)
{
	struct shm *st = st_of(x);
	struct own_mr *m = mr->priv;

	if (m == NULL || m->idx < 0 || m->idx >= SHM_MR_MAX || st->mrs[m->idx] != m) {
		ibc_error("shm: mr_dereg: not a registration of this instance");
		return IBC_ERR_INVAL;
	}
	mr_release(st, m);
	return IBC_OK;
}

/* ---------------------------------------------------- multicast ------- */

/* Maps the group's segment, making it when this process is the first. */
static int group_map(struct shm *st, struct group *g)
{
	size_t len = sizeof(struct grp_seg);
	int fd, tries;
	struct stat sb;
	void *m;

	snprintf(g->segname, sizeof(g->segname), "%s-g%08x", st->prefix, g->pub.id);
	fd = shm_open(g->segname, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		g->created = 1;
		if (ftruncate(fd, (off_t)len) != 0) {
			ibc_error("shm: ftruncate(%s): %s", g->segname, strerror(errno));
			close(fd);
			shm_unlink(g->segname);
			return IBC_ERR_SYS;
		}
	} else if (errno == EEXIST) {
		fd = shm_open(g->segname, O_RDWR, 0600);
	}
	if (fd < 0) {
		ibc_error("shm: shm_open(%s): %s", g->segname, strerror(errno));
		return IBC_ERR_SYS;
	}
	/* a member that joins while the creator sizes it waits for the size */
	for (tries = 0; fstat(fd, &sb) == 0 && (size_t)sb.st_size < len && tries < 10000; tries++)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	if ((size_t)sb.st_size < len) {
		ibc_error("shm: group segment %s never got its size", g->segname);
		close(fd);
		return IBC_ERR_SYS;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		ibc_error("shm: mmap(%s): %s", g->segname, strerror(errno));
		return IBC_ERR_SYS;
	}
	g->seg = m;
	if (g->created) {
		g->seg->id = g->pub.id;
		g->seg->depth = SHM_GROUP_DEPTH;
		g->seg->mtu = SHM_MCAST_MTU;
		atomic_store_explicit(&g->seg->magic, SHM_GROUP_MAGIC, memory_order_release);
	}
	for (tries = 0; atomic_load_explicit(&g->seg->magic, memory_order_acquire) != SHM_GROUP_MAGIC &&
			tries < 10000; tries++)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	if (atomic_load_explicit(&g->seg->magic, memory_order_acquire) != SHM_GROUP_MAGIC ||
	    g->seg->id != g->pub.id) {
		ibc_error("shm: group segment %s is not group %#x's", g->segname, g->pub.id);
		munmap(g->seg, len);
		g->seg = NULL;
		return IBC_ERR_PROTO;
	}
	g->cursor = atomic_load_explicit(&g->seg->head, memory_order_acquire);
	return IBC_OK;
}

static int shm_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			  struct ibc_xport_mcast **out)
{
	struct shm *st = st_of(x);
	struct group *g;
	int slot = -1, rc;

	if (name != NULL)
		id = ibc_xport_mcast_id_from_name(name);
	for (int s = 0; s < SHM_MCAST_SLOTS; s++) {
		if (st->groups[s] != NULL && st->groups[s]->pub.id == id) {
			ibc_error("shm: mcast_join: already a member of group %#x", id);
			return IBC_ERR_INVAL;
		}
		if (st->groups[s] == NULL && slot < 0)
			slot = s;
	}
	if (slot < 0) {
		ibc_error("shm: mcast_join: at most %d groups per process", SHM_MCAST_SLOTS);
		return IBC_ERR_NOMEM;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		ibc_error("shm: out of memory joining a group");
		return IBC_ERR_NOMEM;
	}
	g->slot = slot;
	g->pub.id = id;
	g->pub.mtu = SHM_MCAST_MTU;
	if (name != NULL)
		snprintf(g->pub.name, sizeof(g->pub.name), "%s", name);
	else
		snprintf(g->pub.name, sizeof(g->pub.name), "id:%u", id);
	g->pub.priv = g;
	rc = group_map(st, g);
	if (rc != IBC_OK) {
		free(g);
		return rc;
	}
	/* the slot's receive ring starts empty */
	{
		struct shm_ring *r = ring_at(st->me, ring_group(st->me, slot));
		uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

		atomic_store_explicit(&r->claim, h, memory_order_relaxed);
		r->tail = h;
	}
	st->groups[slot] = g;
	*out = &g->pub;
	return IBC_OK;
}

/* Leaves: posted receives are dropped unreported, the segment unmapped (its
 * name stays until close when this process made it: others may join later). */
static void group_release(struct shm *st, struct group *g)
{
	struct shm_ring *r = ring_at(st->me, ring_group(st->me, g->slot));
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	atomic_store_explicit(&r->claim, h, memory_order_relaxed);
	r->tail = h;
	munmap(g->seg, sizeof(struct grp_seg));
	g->seg = NULL;
	st->groups[g->slot] = NULL;
	if (g->created && st->ngone == st->gone_cap) {
		size_t cap = st->gone_cap ? 2 * st->gone_cap : 16;
		void *n = realloc(st->gone, cap * sizeof(*st->gone));

		if (n != NULL) {
			st->gone = n;
			st->gone_cap = cap;
		}
	}
	if (g->created && st->ngone < st->gone_cap)
		memcpy(st->gone[st->ngone++], g->segname, SHM_NAME_MAX);
	else if (g->created)
		shm_unlink(g->segname); /* no memory to remember it: now */
	free(g);
}

static int shm_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *gp)
{
	struct shm *st = st_of(x);
	struct group *g = gp->priv;

	if (g == NULL || g->slot < 0 || g->slot >= SHM_MCAST_SLOTS || st->groups[g->slot] != g) {
		ibc_error("shm: mcast_leave: not a group of this instance");
		return IBC_ERR_INVAL;
	}
	group_release(st, g);
	return IBC_OK;
}

/* -------------------------------------------------- open / close ------- */

struct ep_info {
	int32_t pid;
	int32_t fd;
	uint64_t ino, dev;
	uint64_t len;
	int32_t proc_ok;
	int32_t pad;
};

static int shm_probe(const struct ibc_xport_params *p)
{
	(void)p;
	return IBC_OK;
}

static void peers_unmap(struct ibc_xport *x, struct shm *st)
{
	if (st->peers == NULL)
		return;
	for (int i = 0; i < x->size; i++) {
		struct peer *pp = &st->peers[i];
		while (pp->pend_head != NULL) {
			struct pend *p = pp->pend_head;
			pp->pend_head = p->next;
			free(p->inline_buf);
			free(p);
		}
		if (pp->maps != NULL) {
			for (int k = 0; k < SHM_MR_MAX; k++)
				if (pp->maps[k].base != NULL)
					munmap(pp->maps[k].base, pp->maps[k].len);
			free(pp->maps);
		}
		if (pp->ctl != NULL && i != x->rank)
			munmap(pp->ctl, pp->ctl_len);
	}
	free(st->peers);
	st->peers = NULL;
}

/* Unlinks names left in /dev/shm by jobs whose rank 0 is gone (a crash during
 * open, or a job without /proc access that died). */
static void stale_sweep(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char name[300];
		int pid;
		if (sscanf(e->d_name, "ibcx-%d-", &pid) != 1 || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		if (shm_unlink(name) == 0)
			ibc_info("shm: removed stale segment %s of a dead job", name);
	}
	closedir(d);
}

static int shm_open_x(struct ibc_xport *x)
{
	struct ibc_boot *b = x->boot;
	struct shm *st;
	struct ep_info mine, *all = NULL;
	char ctl_name[SHM_NAME_MAX];
	char prefix[SHM_PREFIX_MAX];
	uint32_t depth = x->params.rq_depth ? x->params.rq_depth : 256;
	size_t nrings, stride, hdr, len;
	struct stat sb;
	void *map;
	int rc, proc_all = 1;

	if (x->params.conn == IBC_XPORT_CONN_XRC) {
		ibc_xport_unsupported_set("shm: XRC connections exist on verbs only");
		ibc_info("%s", ibc_xport_unsupported_reason());
		return IBC_ERR_UNSUPPORTED;
	}
	if (b->num_nodes > 1) {
		ibc_xport_unsupported_set("shm: all %d ranks must be on one node (the job has %d "
					  "nodes)", x->size, b->num_nodes);
		ibc_error("%s", ibc_xport_unsupported_reason());
		return IBC_ERR_UNSUPPORTED;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL) {
		ibc_error("shm: out of memory");
		return IBC_ERR_NOMEM;
	}
	st->me_fd = -1;
	x->priv = st;

	if (b->local_rank == 0)
		stale_sweep();
	/* the job's prefix, from rank 0 */
	memset(prefix, 0, sizeof(prefix));
	if (x->rank == 0) {
		uint32_t rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			rnd = (uint32_t)time(NULL) ^ (uint32_t)getpid() * 2654435761u;
		snprintf(prefix, sizeof(prefix), "/ibcx-%d-%08x", (int)getpid(), rnd);
	}
	rc = ibc_boot_bcast(b, prefix, sizeof(prefix), 0);
	if (rc != IBC_OK) {
		ibc_error("shm: bcast of the segment prefix failed: %s", ibc_status_str(rc));
		goto err_free_st;
	}
	memcpy(st->prefix, prefix, sizeof(st->prefix));
	st->prefix[sizeof(st->prefix) - 1] = '\0';

	/* own control segment */
	nrings = (size_t)x->size + 1 + SHM_MCAST_SLOTS;
	stride = ring_bytes(depth);
	hdr = (sizeof(struct shm_ctl) + CL - 1) / CL * CL;
	len = hdr + nrings * stride;
	snprintf(ctl_name, sizeof(ctl_name), "%s-r%d-c", st->prefix, x->rank);
	rc = seg_create(ctl_name, len, &st->me_fd, &map, &sb);
	if (rc != IBC_OK)
		goto err_free_st;
	st->me = map;
	st->me_len = len;
	st->me->magic = SHM_MAGIC;
	st->me->rank = (uint32_t)x->rank;
	st->me->size = (uint32_t)x->size;
	st->me->depth = depth;
	st->me->pid = (int32_t)getpid();
	{
		uint32_t salt = 0;
		if (getrandom(&salt, sizeof(salt), GRND_NONBLOCK) != (ssize_t)sizeof(salt))
			salt = (uint32_t)getpid() * 2246822519u;
		st->me->salt = salt & ~SHM_MR_IDX_MASK;
	}
	st->me->total_len = len;
	st->me->ring_off = hdr;
	st->me->ring_stride = stride;
	for (size_t i = 0; i < nrings; i++)
		ring_at(st->me, i)->depth = depth;
	st->rng = ibc_xport_drop_seed(x);

	memset(&mine, 0, sizeof(mine));
	mine.pid = (int32_t)getpid();
	mine.fd = st->me_fd;
	mine.ino = (uint64_t)sb.st_ino;
	mine.dev = (uint64_t)sb.st_dev;
	mine.len = len;
	all = calloc((size_t)x->size, sizeof(*all));
	st->peers = calloc((size_t)x->size, sizeof(*st->peers));
	if (all == NULL || st->peers == NULL) {
		ibc_error("shm: out of memory for %d peers", x->size);
		rc = IBC_ERR_NOMEM;
		goto err_unlink_ctl;
	}
	rc = ibc_boot_allgather(b, &mine, all, sizeof(mine));
	if (rc != IBC_OK) {
		ibc_error("shm: allgather of control segments failed: %s", ibc_status_str(rc));
		goto err_unlink_ctl;
	}
	/* map every peer's control segment, through /proc if possible */
	for (int i = 0; i < x->size; i++) {
		struct peer *pp = &st->peers[i];
		char name[SHM_NAME_MAX];
		void *m = NULL;
		pp->pid = all[i].pid;
		if (i == x->rank) {
			pp->ctl = st->me;
			pp->ctl_len = len;
			continue;
		}
		snprintf(name, sizeof(name), "%s-r%d-c", st->prefix, i);
		rc = seg_open_peer(st, all[i].pid, all[i].fd, NULL, all[i].ino, all[i].dev,
				   all[i].len, 1, &m);
		if (rc != IBC_OK) {
			proc_all = 0;
			rc = seg_open_peer(st, all[i].pid, all[i].fd, name, all[i].ino, all[i].dev,
					   all[i].len, 0, &m);
		}
		if (rc != IBC_OK) {
			ibc_error("shm: cannot map rank %d's control segment %s: %s", i, name,
				  strerror(errno));
			goto err_unmap_peers;
		}
		pp->ctl = m;
		pp->ctl_len = all[i].len;
		if (pp->ctl->magic != SHM_MAGIC || (int)pp->ctl->rank != i) {
			ibc_error("shm: rank %d's control segment is not valid", i);
			rc = IBC_ERR_PROTO;
			goto err_unmap_peers;
		}
	}
	mine.proc_ok = proc_all;
	rc = ibc_boot_allgather(b, &mine, all, sizeof(mine));
	if (rc != IBC_OK) {
		ibc_error("shm: allgather after mapping failed: %s", ibc_status_str(rc));
		goto err_unmap_peers;
	}
	st->procfd = 1;
	for (int i = 0; i < x->size; i++)
		if (!all[i].proc_ok)
			st->procfd = 0;
	/* every peer has mapped this control segment: the name can go */
	shm_unlink(ctl_name);
	free(all);
	if (!st->procfd)
		ibc_warn("shm: /proc/<pid>/fd is not usable between ranks; segment names stay "
			 "in /dev/shm until dereg/close and user memory is not remote-accessible");
	ibc_debug("shm: prefix %s, %d ranks, control segment %zu bytes, procfd %d",
		  st->prefix, x->size, len, st->procfd);

	memset(&x->caps, 0, sizeof(x->caps));
	snprintf(x->caps.backend, sizeof(x->caps.backend), "shm");
	snprintf(x->caps.device, sizeof(x->caps.device), "shm");
	x->caps.max_inline = x->params.max_inline < SHM_INLINE_MAX ? x->params.max_inline
								  : SHM_INLINE_MAX;
	x->caps.max_sge = x->params.max_sge;
	x->caps.max_send_wr = x->params.sq_depth ? x->params.sq_depth : 256;
	x->caps.max_recv_wr = depth;
	x->caps.cq_depth = x->params.cq_depth ? x->params.cq_depth : 4096;
	x->caps.max_msg = SHM_MAX_MSG;
	x->caps.mcast_mtu = SHM_MCAST_MTU;
	x->caps.atomics = 1;
	x->caps.mcast = 1;
	x->caps.mcast_loopback = 0;
	x->caps.xrc = 0;
	x->caps.srq = 1;
	x->caps.user_mem = st->procfd;
	x->caps.drop_injection = 1;
	st->stats.qps = (uint64_t)(x->size - 1);
	st->stats.srqs = 1;
	st->stats.conn_bytes = len;
	return IBC_OK;

err_unmap_peers:
	peers_unmap(x, st);
err_unlink_ctl:
	free(all);
	munmap(st->me, st->me_len);
	close(st->me_fd);
	shm_unlink(ctl_name);
err_free_st:
	free(st);
	x->priv = NULL;
	return rc;
}

static int shm_connect(struct ibc_xport *x, const uint8_t *want)
{
	int rc;

	(void)want; /* shm is always fully connected: control segments are mapped at open */
	rc = ibc_boot_barrier(x->boot);
	if (rc != IBC_OK)
		ibc_error("shm: connect barrier failed: %s", ibc_status_str(rc));
	return rc;
}

static int shm_close(struct ibc_xport *x)
{
	struct shm *st = st_of(x);
	int rc;

	if (st == NULL)
		return IBC_OK;
	/* nobody may still be writing into our memory */
	rc = ibc_boot_barrier(x->boot);
	if (rc != IBC_OK)
		ibc_warn("shm: close barrier failed (%s); releasing anyway", ibc_status_str(rc));
	for (int s = 0; s < SHM_MCAST_SLOTS; s++)
		if (st->groups[s] != NULL)
			group_release(st, st->groups[s]);
	/* every member is past the close barrier: the names can go */
	for (size_t i = 0; i < st->ngone; i++)
		shm_unlink(st->gone[i]);
	free(st->gone);
	st->gone = NULL;
	st->ngone = st->gone_cap = 0;
	for (int i = 0; i < SHM_MR_MAX; i++)
		if (st->mrs[i] != NULL)
			mr_release(st, st->mrs[i]);
	peers_unmap(x, st);
	munmap(st->me, st->me_len);
	close(st->me_fd);
	free(st->scq);
	free(st);
	x->priv = NULL;
	return rc;
}

static int shm_stats_get(struct ibc_xport *x, struct ibc_xport_stats *out)
{
	*out = st_of(x)->stats;
	return IBC_OK;
}

const struct ibc_xport_ops ibc_xport_shm_ops = {
	.name = "shm",
	.probe = shm_probe,
	.open = shm_open_x,
	.close = shm_close,
	.connect = shm_connect,
	.mr_reg = shm_mr_reg,
	.mr_alloc = shm_mr_alloc,
	.mr_dereg = shm_mr_dereg,
	.post = shm_post,
	.recv_post = shm_recv_post,
	.cq_poll = shm_cq_poll,
	.progress = shm_progress,
	.mcast_join = shm_mcast_join,
	.mcast_leave = shm_mcast_leave,
	.stats_get = shm_stats_get,
};
