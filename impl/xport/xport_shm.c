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
 * a ring of SHM_GROUP_DEPTH datagram slots in its own segment (a line each,
 * the payload in it when small, else in a page of its own: shm_priv.h)
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
 * peer waits behind it (order kept); the queue moves in post/poll/progress/wait.
 * This file: receive rings, execution, post / poll, open / close;
 * shm_cq.c: completions (a send's, a receive's delivery);
 * shm_mem.c: segments, registrations, the access check, the copies;
 * shm_store.h / .c: the store into mapped memory and its torn test mode;
 * shm_mcast.c: group rings; shared state in shm_priv.h.  Each calls only the
 * files after it: xport_shm.c, shm_mcast.c, shm_cq.c, shm_mem.c, shm_store.c. */
#define _GNU_SOURCE
#include "xport/shm_priv.h"
#include "xport/shm_store.h"

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

/* ------------------------------------------------------------ helpers ---- */

/* the send queue a WR goes to; NULL when the WR names none (post_one
 * reports that) */
static struct shm_sq *sq_of(struct ibc_xport *x, struct shm *st, const struct ibc_xport_wr *wr, int *q)
{
	if (wr->opcode == IBC_XPORT_OP_MCAST_SEND) {
		struct group *g = wr->mcast != NULL ? wr->mcast->priv : NULL;

		if (g == NULL || g->slot < 0 || g->slot >= SHM_MCAST_SLOTS || st->groups[g->slot] != g)
			return NULL;
		*q = -1 - g->slot;
		return &g->sq;
	}
	if (wr->peer < 0 || wr->peer >= x->size || st->peers == NULL)
		return NULL;
	*q = wr->peer;
	return &st->peers[wr->peer].sq;
}

/* a polled completion gives back its queue's slots up to its WR */
static void sq_free(struct shm *st, const struct scq_ent *e)
{
	struct shm_sq *sq = NULL;

	if (e->q >= 0)
		sq = &st->peers[e->q].sq;
	else if (-1 - e->q < SHM_MCAST_SLOTS && st->groups[-1 - e->q] != NULL)
		sq = &st->groups[-1 - e->q]->sq;
	if (sq != NULL && e->seq <= sq->posted && e->seq > sq->freed)
		sq->freed = e->seq;
}

/* ---------------------------------------------------------- rings -------- */

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
		r = ibc_xport_shm_local_iov(st, wr, 0, iov, &total);
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		r = ibc_xport_shm_resolve(st, wr->peer, self, wr->rkey, wr->remote_addr, total,
					  IBC_XPORT_ACCESS_REMOTE_WRITE, &t);
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		slot = NULL;
		if (wr->opcode == IBC_XPORT_OP_WRITE_IMM) {
			slot = claim_p2p(st, wr->peer, &seq);
			if (slot == NULL) {
				*res = EXEC_RNR;
				return IBC_OK;
			}
		}
		r = ibc_xport_shm_copy_to(&t, iov, wr->num_sge, total);
		atomic_thread_fence(memory_order_release);
		if (slot != NULL)
			slot_finish(slot, seq, r == RS_OK ? RS_OK : RS_FLUSH,
				    IBC_XPORT_OP_RECV_WRITE_IMM, (uint32_t)total, wr->imm,
				    IBC_XPORT_WC_IMM, x->rank);
		return ibc_xport_shm_complete_send(st, wr, r, (uint32_t)total);

	case IBC_XPORT_OP_READ:
		r = ibc_xport_shm_local_iov(st, wr, IBC_XPORT_ACCESS_LOCAL_WRITE, iov, &total);
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		r = ibc_xport_shm_resolve(st, wr->peer, self, wr->rkey, wr->remote_addr, total,
					  IBC_XPORT_ACCESS_REMOTE_READ, &t);
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		atomic_thread_fence(memory_order_acquire);
		r = ibc_xport_shm_copy_from(&t, iov, wr->num_sge, total);
		return ibc_xport_shm_complete_send(st, wr, r, (uint32_t)total);

	case IBC_XPORT_OP_SEND:
	case IBC_XPORT_OP_SEND_IMM:
		r = ibc_xport_shm_local_iov(st, wr, 0, iov, &total);
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		if (rng_drop(st, x->params.p2p_drop)) {
			st->stats.p2p_dropped++;
			return ibc_xport_shm_complete_send(st, wr, RS_OK, (uint32_t)total);
		}
		slot = claim_p2p(st, wr->peer, &seq);
		if (slot == NULL) {
			*res = EXEC_RNR;
			return IBC_OK;
		}
		r = ibc_xport_shm_deliver(st, wr->peer, slot, seq, iov, wr->num_sge, total,
					  IBC_XPORT_OP_RECV,
					  wr->opcode == IBC_XPORT_OP_SEND_IMM ? wr->imm : 0,
					  wr->opcode == IBC_XPORT_OP_SEND_IMM ? IBC_XPORT_WC_IMM : 0);
		return ibc_xport_shm_complete_send(st, wr, r, (uint32_t)total);

	case IBC_XPORT_OP_FETCH_ADD:
	case IBC_XPORT_OP_CMP_SWAP: {
		uint64_t old;
		r = ibc_xport_shm_local_iov(st, wr, IBC_XPORT_ACCESS_LOCAL_WRITE, iov, &total);
		if (r == RS_OK && total != 8)
			r = RS_LOCAL_PROT;
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		r = ibc_xport_shm_resolve(st, wr->peer, self, wr->rkey, wr->remote_addr, 8,
					  IBC_XPORT_ACCESS_REMOTE_ATOMIC, &t);
		if (r != RS_OK)
			return ibc_xport_shm_complete_send(st, wr, r, 0);
		if (t.kind != T_PTR || (wr->remote_addr & 7) != 0)
			return ibc_xport_shm_complete_send(st, wr, RS_ATOMIC_MEM, 0);
		if (wr->opcode == IBC_XPORT_OP_FETCH_ADD) {
			old = __atomic_fetch_add((uint64_t *)(void *)t.ptr, wr->compare_add,
						 __ATOMIC_SEQ_CST);
		} else {
			old = wr->compare_add;
			__atomic_compare_exchange_n((uint64_t *)(void *)t.ptr, &old, wr->swap, 0,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		}
		memcpy(iov[0].iov_base, &old, 8);
		return ibc_xport_shm_complete_send(st, wr, RS_OK, 8);
	}

	case IBC_XPORT_OP_MCAST_SEND:
		return ibc_xport_shm_mcast_send(st, x, wr);

	default:
		break;
	}
	return ibc_xport_shm_complete_send(st, wr, RS_LOCAL_PROT, 0);
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
	p->seq = st->cur_seq;
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
			int res, rc;

			st->cur_q = i;
			st->cur_seq = p->seq;
			rc = exec_wr(st, x, &p->wr, &res);
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

/* Where a fast write of len bytes to offset remote_addr of peer's key lands
 * in this process: the peer's registration is the one its resolve cache
 * holds and nothing waits ahead of the write to that peer; NULL otherwise
 * (the general path decides). */
static char *fast_target(struct ibc_xport *x, struct shm *st, int peer, uint32_t rkey,
			 uint64_t remote_addr, uint64_t len)
{
	if (len == 0 || peer < 0 || peer >= x->size || peer == x->rank || !x->connected ||
	    st->peers[peer].pend_head != NULL)
		return NULL;
	return shm_rcache_hit(shm_rcache_of(&st->peers[peer], rkey), rkey, remote_addr, len,
			      IBC_XPORT_ACCESS_REMOTE_WRITE);
}

static void fast_store(char *d, const void *src, uint64_t len)
{
	shm_store(d, src, len);
	atomic_thread_fence(memory_order_release); /* before any later write, as exec_wr */
}

/* The fast path, for the latency kernels and the algorithms' flag writes:
 * an RDMA write of one sge to a peer whose registration is the one its
 * resolve cache holds, nothing queued to that peer.  The checks that
 * wr_check, local_iov and resolve make, in this case's form, then one store;
 * no iovec, no target.  Returns 1 and *rc when it took the WR, 0 when the
 * WR is not such a write (nothing done: the general path decides). */
static int write_fast(struct ibc_xport *x, struct shm *st, const struct ibc_xport_wr *wr, int *rc)
{
	const struct ibc_xport_sge *s = wr->sge;
	char *d;

	if (wr->opcode != IBC_XPORT_OP_WRITE || wr->num_sge != 1 || s == NULL)
		return 0;
	if ((wr->flags & IBC_XPORT_WR_INLINE) ? s->len > x->caps.max_inline
					      : !shm_local_sge_ok(st, s, 0))
		return 0;
	d = fast_target(x, st, wr->peer, wr->rkey, wr->remote_addr, s->len);
	if (d == NULL)
		return 0;
	fast_store(d, (const void *)(uintptr_t)s->addr, s->len);
	*rc = ibc_xport_shm_complete_send(st, wr, RS_OK, s->len);
	return 1;
}

/* ibc_xport_write_inline's path: write_fast's case for an unsignaled inline
 * write, with no WR to build, no send-queue slot and no completion. */
static int shm_write_inline(struct ibc_xport *x, int peer, const void *src, uint32_t len,
			    uint64_t remote_addr, uint32_t rkey, int *rc)
{
	struct shm *st = st_of(x);
	char *d = len <= x->caps.max_inline ? fast_target(x, st, peer, rkey, remote_addr, len) : NULL;

	if (d == NULL)
		return 0;
	st->stats.post_calls++;
	fast_store(d, src, len);
	*rc = IBC_OK;
	return 1;
}

/* One WR by the general path: checked, then run now or queued behind the
 * peer's waiting WRs (or, finding no receive buffer, queued itself). */
static int post_one(struct ibc_xport *x, struct shm *st, const struct ibc_xport_wr *wr, int i)
{
	int res, rc = wr_check(x, wr, i);

	if (rc != IBC_OK)
		return rc;
	if (wr->opcode != IBC_XPORT_OP_MCAST_SEND && st->peers[wr->peer].pend_head != NULL)
		return pend_add(st, wr->peer, wr);
	rc = exec_wr(st, x, wr, &res);
	if (rc == IBC_OK && res == EXEC_RNR) {
		st->stats.rnr_waits++;
		rc = pend_add(st, wr->peer, wr);
	}
	return rc;
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
		int q = 0;
		struct shm_sq *sq = sq_of(x, st, &wrs[i], &q);

		if (sq != NULL) {
			if (sq->posted - sq->freed >= x->caps.max_send_wr) {
				ibc_debug("shm: post: the send queue to %s %d is full (%u WRs since "
					  "the last polled completion)", q >= 0 ? "peer" : "group slot",
					  q >= 0 ? q : -1 - q, x->caps.max_send_wr);
				return IBC_ERR_AGAIN;
			}
			st->cur_q = q;
			st->cur_seq = ++sq->posted;
		}
		if (!write_fast(x, st, &wrs[i], &rc))
			rc = post_one(x, st, &wrs[i], i);
		if (rc != IBC_OK) {
			if (sq != NULL)
				sq->posted--; /* not posted: no slot taken */
			return rc;
		}
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
		size_t ri;

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
			ri = ring_group(st->me, g->slot);
		} else if (wr->peer == IBC_XPORT_PEER_ANY) {
			ri = ring_srq(st->me);
		} else if (wr->peer >= 0 && wr->peer < x->size) {
			ri = (size_t)wr->peer;
		} else {
			ibc_error("shm: recv_post: wr %d: peer %d out of range", i, wr->peer);
			return IBC_ERR_INVAL;
		}
		r = ring_at(st->me, ri);
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
		st->ractive[ri / 64] |= 1ull << (ri % 64);
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

/* The completions of the rings with receives outstanding (st->ractive), in
 * round robin from st->rr: this runs on every poll of a receive wait, and a
 * process has N + 9 rings, mostly idle. */
static int rings_poll(struct shm *st, int max, struct ibc_xport_wc *wc)
{
	size_t start = st->rr < st->nrings ? st->rr : 0;
	int got = 0;

	st->rr = start + 1 < st->nrings ? (unsigned)(start + 1) : 0;
	for (int pass = 0; pass < 2 && got < max; pass++) {
		size_t lo = pass ? 0 : start, hi = pass ? start : st->nrings;

		for (size_t w = lo / 64; w * 64 < hi && got < max; w++) {
			uint64_t bits = st->ractive[w];

			if (w == lo / 64 && lo % 64)
				bits &= ~0ull << (lo % 64);
			if (hi < (w + 1) * 64)
				bits &= (1ull << (hi % 64)) - 1;
			while (bits != 0 && got < max) {
				size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
				struct shm_ring *r = ring_at(st->me, i);

				bits &= bits - 1;
				got += ring_poll(r, max - got, wc + got);
				if (r->tail >= atomic_load_explicit(&r->head, memory_order_relaxed))
					st->ractive[i / 64] &= ~(1ull << (i % 64));
			}
		}
	}
	return got;
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
			sq_free(st, &st->scq[st->scq_head]);
			wc[got++] = st->scq[st->scq_head].wc;
			st->scq_head = (st->scq_head + 1) % st->scq_cap;
			st->scq_count--;
		}
	}
	if ((cq & IBC_XPORT_CQ_RECV) && got < max) {
		for (int g = 0; g < SHM_MCAST_SLOTS; g++)
			if (st->groups[g] != NULL)
				ibc_xport_shm_group_pull(st, x, st->groups[g]);
		got += rings_poll(st, max - got, wc + got);
	}
	*n = got;
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
	{
		const char *torn = getenv("IBCHAR_SHM_TORN");

		ibc_xport_shm_torn = torn != NULL && strcmp(torn, "1") == 0;
	}
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
	rc = ibc_xport_shm_seg_create(ctl_name, len, &st->me_fd, &map, &sb);
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
	st->nrings = (size_t)x->size + 1 + SHM_MCAST_SLOTS;
	st->ractive = calloc((st->nrings + 63) / 64, sizeof(*st->ractive));
	if (all == NULL || st->peers == NULL || st->ractive == NULL) {
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
		rc = ibc_xport_shm_seg_open_peer(st, all[i].pid, all[i].fd, NULL, all[i].ino,
						 all[i].dev, all[i].len, 1, &m);
		if (rc != IBC_OK) {
			proc_all = 0;
			rc = ibc_xport_shm_seg_open_peer(st, all[i].pid, all[i].fd, name, all[i].ino,
							 all[i].dev, all[i].len, 0, &m);
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
	x->caps.write_needs_cpu = 0; /* the writer's own store */
	x->caps.write_is_copy = 1;
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
	free(st->ractive);
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
			ibc_xport_shm_group_release(st, st->groups[s]);
	/* every member is past the close barrier: the names can go */
	for (size_t i = 0; i < st->ngone; i++)
		shm_unlink(st->gone[i]);
	free(st->gone);
	st->gone = NULL;
	st->ngone = st->gone_cap = 0;
	for (int i = 0; i < SHM_MR_MAX; i++)
		if (st->mrs[i] != NULL)
			ibc_xport_shm_mr_release(st, st->mrs[i]);
	peers_unmap(x, st);
	munmap(st->me, st->me_len);
	close(st->me_fd);
	free(st->scq);
	free(st->ractive);
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
	.mr_reg = ibc_xport_shm_mr_reg,
	.mr_alloc = ibc_xport_shm_mr_alloc,
	.mr_dereg = ibc_xport_shm_mr_dereg,
	.post = shm_post,
	.write_inline = shm_write_inline,
	.recv_post = shm_recv_post,
	.cq_poll = shm_cq_poll,
	.progress = shm_progress,
	.mcast_join = ibc_xport_shm_mcast_join,
	.mcast_leave = ibc_xport_shm_mcast_leave,
	.stats_get = shm_stats_get,
};
