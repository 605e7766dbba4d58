/* RGM: RDMA-based gather and multicast (Kini et al. §3.3, §4.3).
 *
 * Gather: a k-nomial tree of radix l + 1 rooted at rank 0 (impl/pattern): a
 * rank waits until each child has written the barrier id into its slot (in
 * stage order), then writes the id into slot <rank> of its parent.  The tree
 * has ceil(log_{l+1} N) stages and no rank gathers from more than l children
 * in one stage.  With l >= N - 1 the tree is flat: one stage, every rank a
 * child of the root.
 *
 * The paper (§3.3) asks for l < N, but (§5) chose l = 7 "in our
 * implementations", and its figures run RGM from N = 2 to 16: below N = 8
 * that l is not < N, and its gather is flat (the paper gives no fan-in per N;
 * this reading is ours).  We follow the implementation: any
 * l = 2^k - 1 at any N, 7 by default.  The flat gather matters where ranks
 * outnumber the PUs: a barrier then costs about one scheduler switch per
 * rank and step, and the flat tree has the fewest steps (two: the gather
 * and the release).  At N = 6 on 2 PUs the largest l < N (3) gives three
 * steps, and Open MPI's barrier there (linear, its choice for 4 <= N < 8)
 * was faster than every RDS, RPE or RGM of ours (the runs are not stored;
 * docs/design.md, "Wait strategy", states the rule).
 *
 * Release: the root stores the id in its release word and sends one UD
 * multicast datagram carrying the id; every other rank leaves when it has
 * received a datagram with an id >= its own.
 *
 * Where ranks outnumber the PUs (spin-yield) and are pinned, a parent whose
 * PU-mates (the ranks pinned to its PU) are all its own children waits first
 * for those children, yielding, and then spins, without yielding, for the
 * children on other PUs (for at most RGM_SPIN_US, then it yields again).
 * Once its PU-mates have arrived, nobody on its PU has anything to do
 * before the release, so a yield there only hands the PU to a rank that
 * polls once and yields back, and the children on the other PU arrive
 * meanwhile.  Measured at N = 6 on 2 PUs (flat, the root): back to back
 * 2.7-2.9 us against 3.3-3.5 with yields (the runs are not stored;
 * docs/design.md, "Wait strategy", states the rule).  Not on a transport
 * whose writes need a CPU of the receiving host (rxe: the kernel's receive
 * path, which a spinning root would keep waiting).
 *
 * Reliability (§4.3): each receiver keeps a timer (the tunable timeout).
 * When the release is late it sends a NAK to the root; the root retransmits
 * the release; receivers discard datagrams they have already seen
 * (counted as duplicates).
 *
 * The NAK is an RDMA write into a per-rank NAK word at the root, not a
 * two-sided send.  Reasons: the root needs no receive buffers and no NAK
 * completion handling; it notices NAKs by reading its own memory, as it
 * notices its children; RGM stays usable on a transport without two-sided
 * messages; and a NAK can never be lost (RC) nor overflow a receive queue
 * when many ranks time out at once.  The word holds (id << 20 | sequence),
 * so a repeated NAK for the same barrier is still a change the root sees.
 * The paper's root is woken by a solicited event; ours serves NAKs wherever
 * it waits, through the transport's progress hook (xport.h), which every
 * wait of the process calls: RGM's own (gathering the next barrier, or in
 * destroy), another barrier's, the harness's sync step and window waits
 * (through the suite driver).  A rank that lost release k
 * cannot enter anything collective after barrier k, so the root is always
 * found waiting for it somewhere.
 *
 * The last resort: where the root waits without progress (a bootstrap
 * collective, e.g. the harness's sync across hosts), after its NAKs (one
 * per timeout) have gone unanswered for RGM_PULL_TIMEOUTS timeouts a
 * receiver reads the root's release word with an RDMA read (counted as a
 * pull) — one-sided, it never needs the root.  A retransmitted release may
 * be lost too, and a loaded VM may not run the root for a while, so a few
 * unanswered NAKs say little: with 30% loss per datagram, 8 in a row go
 * unanswered once in ~15000 releases; 400 do not.  Without losses none of
 * this runs: a receiver only spins on its receive queue.
 *
 * Words of each rank (64-bit): [0, N) gather slots by child rank;
 * [N, 2N) NAK words (root); [2N] release word (root) / read target (others);
 * [2N+1, 3N+1) done words (root, destroy). */
#include "barrier/barrier_impl.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"
#include "core/wait.h"

#include <stdlib.h>
#include <string.h>

#define RGM_ROOT 0
#define RGM_NRECV 32         /* multicast receive buffers per rank */
#define RGM_RECV_BYTES 64    /* room for a GRH (40) + the 8-byte id */
#define RGM_NAK_SEQ_BITS 20
#define RGM_SPIN_US 5           /* a parent's spin for children on other PUs */
#define RGM_PULL_TIMEOUTS 400 /* NAK timeouts without a release before a receiver pulls
				 (200 ms by default: a VM may stall that long; a root
				 that does not serve NAKs does so for good) */

enum { KIND_MCAST_RECV = IBC_BARRIER_WR_ALG, KIND_PULL };

struct rgm {
	struct ibc_xport_mcast *g;
	int parent;
	int nchildren;
	int *children;             /* in stage order, or: PU-mates first (spin below) */
	int nmates;                /* children[0, nmates) share this rank's PU */
	int spin;                  /* spin for children[nmates, nchildren) (header) */
	struct ibc_xport_mr *rmr;  /* multicast receive buffers (non-root) */
	uint64_t released;         /* highest release id seen (non-root) */
	uint64_t *nak_last;        /* root: last NAK word seen per rank */
	uint64_t nak_seq;          /* this rank's NAKs so far */
	int pull_done;
	int serving;               /* root: the progress hook is on */
	uint32_t mc_unsig;         /* root: releases since the last signaled one */
};

static const struct ibc_barrier_tunable tunables[] = {
	{ "fanin", "7", "maximum fan-in l of the gather tree: 2^k - 1; l >= N - 1 is a flat "
			"gather (default 7)" },
	{ "timeout", "500", "microseconds a receiver waits for the release before a NAK" },
	{ "deadline", "60", "seconds before a wait gives up (IBC_ERR_TIMEOUT)" },
	{ NULL, NULL, NULL }
};

static size_t w_nak(const struct ibc_barrier *b, int r) { return (size_t)b->size + (size_t)r; }
static size_t w_release(const struct ibc_barrier *b) { return 2 * (size_t)b->size; }
static size_t w_done(const struct ibc_barrier *b, int r) { return 2 * (size_t)b->size + 1 + (size_t)r; }

static uint64_t load_acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void rgm_wc(struct ibc_barrier *b, const struct ibc_xport_wc *wc, unsigned kind,
		   uint32_t index)
{
	struct rgm *g = b->priv;

	if (kind == KIND_PULL) {
		g->pull_done = 1;
		return;
	}
	if (kind == KIND_MCAST_RECV && g->rmr && index < RGM_NRECV) {
		unsigned char *buf = (unsigned char *)g->rmr->addr + (size_t)index * RGM_RECV_BYTES;
		struct ibc_xport_sge sge = { .addr = (uint64_t)(uintptr_t)buf,
					     .len = RGM_RECV_BYTES, .lkey = g->rmr->lkey };
		int rc;

		if (wc->byte_len >= 8 && wc->byte_len <= RGM_RECV_BYTES) {
			uint64_t v;

			/* the id is the datagram's last 8 bytes (after a GRH if any) */
			memcpy(&v, buf + wc->byte_len - 8, 8);
			if (v > g->released)
				g->released = v;
			else
				b->cnt.duplicates++;
		}
		rc = ibc_xport_recv(b->x, -1, g->g, &sge, 1,
				    ibc_barrier_wrid_make(b, KIND_MCAST_RECV, index));
		if (rc && !b->failed) {
			ibc_error("barrier rgm rank %d: reposting a multicast receive: %s", b->rank,
				  ibc_status_str(rc));
			b->failed = rc;
		}
	}
}

static int naks_serve(struct ibc_barrier *b);

/* The root's progress hook: NAKs answered wherever the root waits. */
static int rgm_serve(void *arg)
{
	struct ibc_barrier *b = arg;
	int rc = naks_serve(b);

	return rc ? rc : ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
}

static void rgm_counters(struct ibc_barrier *b)
{
	struct rgm *g = b->priv;

	if (g->g)
		b->cnt.mcast_drops = g->g->dropped;
}

/* Which children to wait for spinning (see the header): collective, every
 * rank learns where every rank is pinned. */
static int gather_plan(struct ibc_barrier *b, struct rgm *g)
{
	struct place {
		int32_t node, pu;
	} me = { b->x->boot->node_id, ibc_topo_bound_pu() }, *all;
	uint8_t *child;
	int i, r, k = 0, rc;

	all = calloc((size_t)b->size, sizeof(*all));
	child = calloc((size_t)b->size, 1);
	if (!all || !child) {
		rc = IBC_ERR_NOMEM;
		goto out;
	}
	rc = ibc_boot_allgather(b->x->boot, &me, all, sizeof(me));
	if (rc) {
		ibc_error("barrier rgm: sharing where the ranks are pinned: %s", ibc_status_str(rc));
		goto out;
	}
	g->spin = b->x->wait == IBC_WAIT_SPIN_YIELD && !b->x->caps.write_needs_cpu &&
		  me.pu >= 0 && g->nchildren > 0;
	for (i = 0; i < g->nchildren; i++)
		child[g->children[i]] = 1;
	/* every rank of this node that may run on this PU must be a child */
	for (r = 0; r < b->size && g->spin; r++)
		if (r != b->rank && all[r].node == me.node &&
		    (all[r].pu < 0 || (all[r].pu == me.pu && !child[r])))
			g->spin = 0;
	if (!g->spin)
		goto out;
	for (i = 0; i < g->nchildren; i++)
		if (all[g->children[i]].node == me.node && all[g->children[i]].pu == me.pu)
			child[g->children[i]] = 2;
	for (r = 0; r < b->size; r++)
		if (child[r] == 2)
			g->children[k++] = r;
	g->nmates = k;
	for (r = 0; r < b->size; r++)
		if (child[r] == 1)
			g->children[k++] = r;
out:
	free(child);
	free(all);
	return rc;
}

static int rgm_setup(struct ibc_barrier *b)
{
	struct rgm *g = b->priv;
	struct ibc_pattern_node node;
	uint8_t *want;
	int rc, i;

	b->wc_hook = rgm_wc;
	g->children = malloc((size_t)b->size * sizeof(*g->children));
	g->nak_last = calloc((size_t)b->size, sizeof(*g->nak_last));
	want = calloc((size_t)b->size, 1);
	if (!g->children || !g->nak_last || !want) {
		rc = IBC_ERR_NOMEM;
		goto out_free_want;
	}
	rc = ibc_pattern_knomial_node_get(b->size, b->fanin + 1, RGM_ROOT, b->rank, g->children,
					  b->size, &node);
	if (rc) {
		ibc_error("barrier rgm: tree of fan-in %d for N = %d: %s", b->fanin, b->size,
			  ibc_status_str(rc));
		goto out_free_want;
	}
	g->parent = node.parent;
	g->nchildren = node.nchildren;
	rc = gather_plan(b, g);
	if (rc)
		goto out_free_want;
	for (i = 0; i < g->nchildren; i++)
		want[g->children[i]] = 1;
	if (g->parent >= 0)
		want[g->parent] = 1;
	want[RGM_ROOT] = b->rank != RGM_ROOT; /* NAKs, reads and done words go to the root */
	rc = ibc_barrier_words_setup(b, 3 * (size_t)b->size + 1, want);
	if (rc || b->size == 1)
		goto out_free_want;

	/* a group of this instance's own, every rank a member */
	rc = ibc_xport_mcast_join_new(b->x, (uint32_t)b->fm.live, 1, &g->g);
	if (rc)
		goto out_free_want;
	if (b->rank != RGM_ROOT) {
		rc = ibc_xport_mr_alloc(b->x, RGM_NRECV * RGM_RECV_BYTES, IBC_XPORT_ACCESS_ALL,
					&g->rmr);
		if (rc) {
			ibc_error("barrier rgm: registering multicast receive buffers: %s",
				  ibc_status_str(rc));
			goto out_free_want;
		}
		for (i = 0; i < RGM_NRECV; i++) {
			struct ibc_xport_sge sge = {
				.addr = (uint64_t)(uintptr_t)g->rmr->addr + (uint64_t)i * RGM_RECV_BYTES,
				.len = RGM_RECV_BYTES, .lkey = g->rmr->lkey };

			rc = ibc_xport_recv(b->x, -1, g->g, &sge, 1,
					    ibc_barrier_wrid_make(b, KIND_MCAST_RECV, (uint32_t)i));
			if (rc) {
				ibc_error("barrier rgm: posting a multicast receive: %s",
					  ibc_status_str(rc));
				goto out_free_want;
			}
		}
	}
	if (b->rank == RGM_ROOT) {
		rc = ibc_xport_progress_hook_add(b->x, rgm_serve, b);
		if (rc)
			goto out_free_want;
		g->serving = 1;
	}
	/* every member has joined and posted before the first release */
	rc = ibc_boot_barrier(b->x->boot);
	if (rc)
		ibc_error("barrier rgm: bootstrap barrier after setup: %s", ibc_status_str(rc));
out_free_want:
	free(want);
	return rc;
}

/* Root: one release datagram carrying value. */
static int release_send(struct ibc_barrier *b, uint64_t value)
{
	struct rgm *g = b->priv;
	struct ibc_xport_sge sge;
	struct ibc_barrier_waiter w;
	uint64_t v = value;
	unsigned flags = 0;
	int rc;

	if (b->inline_ok) {
		sge.addr = (uint64_t)(uintptr_t)&v;
		sge.lkey = 0;
		flags = IBC_XPORT_WR_INLINE;
	} else {
		/* the release word only grows, so a later value is as good */
		sge.addr = (uint64_t)(uintptr_t)&b->words[w_release(b)];
		sge.lkey = b->mr->lkey;
	}
	sge.len = 8;
	/* The group's send queue is this instance's own (verbs: one UD QP per
	 * group), and so is its count of unsignaled posts.  Not b->unsig[rank]: that
	 * counts posts to a peer's queue, shared by every instance on x; with
	 * releases counted there, two RGM instances run in turn would leave
	 * every signaled release to one of them, and the other's queue, whose
	 * slots only a completion frees, would fill after sq_depth releases. */
	if (++g->mc_unsig >= b->sig_every || !b->inline_ok) {
		g->mc_unsig = 0;
		flags |= IBC_XPORT_WR_SIGNALED;
		b->outstanding++;
	}
	ibc_barrier_waiter_init(b, &w);
	for (;;) {
		rc = ibc_xport_mcast_send(b->x, g->g, &sge, 1, flags,
					  ibc_barrier_wrid_make(b, IBC_BARRIER_WR_SIGNALED, 0));
		if (rc != IBC_ERR_AGAIN)
			break;
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
		if (rc)
			return rc;
		rc = ibc_barrier_waiter_tick(b, &w, "send queue space", b->rank);
		if (rc)
			return rc;
	}
	if (rc)
		ibc_error("barrier rgm: multicast release %llu: %s", (unsigned long long)value,
			  ibc_status_str(rc));
	return rc;
}

/* Root: retransmit the release when a rank NAKed a barrier already released. */
static int naks_serve(struct ibc_barrier *b)
{
	struct rgm *g = b->priv;
	uint64_t rel = b->words[w_release(b)];
	int r, any = 0;

	for (r = 0; r < b->size; r++) {
		uint64_t w;

		if (r == RGM_ROOT)
			continue;
		w = load_acq(&b->words[w_nak(b, r)]);
		if (w == g->nak_last[r])
			continue;
		g->nak_last[r] = w;
		if ((w >> RGM_NAK_SEQ_BITS) <= rel)
			any = 1; /* else: premature (not released yet); the release will come */
	}
	if (!any || rel == 0)
		return IBC_OK;
	b->cnt.retransmits++;
	return release_send(b, rel);
}

/* Non-root: read the root's release word (one-sided fallback). */
static int release_pull(struct ibc_barrier *b, uint64_t *value)
{
	struct rgm *g = b->priv;
	struct ibc_xport_sge sge = { .addr = (uint64_t)(uintptr_t)&b->words[w_release(b)],
				     .len = 8, .lkey = b->mr->lkey };
	struct ibc_barrier_waiter w;
	int rc;

	g->pull_done = 0;
	rc = ibc_xport_read(b->x, RGM_ROOT, &sge, 1,
			    b->rdesc[RGM_ROOT].addr + w_release(b) * 8, b->rdesc[RGM_ROOT].rkey,
			    IBC_XPORT_WR_SIGNALED, ibc_barrier_wrid_make(b, KIND_PULL, 0));
	if (rc) {
		ibc_error("barrier rgm rank %d: reading the root's release word: %s", b->rank,
			  ibc_status_str(rc));
		return rc;
	}
	ibc_barrier_waiter_init(b, &w);
	while (!g->pull_done) {
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
		if (rc)
			return rc;
		if (g->pull_done)
			break;
		rc = ibc_barrier_waiter_tick(b, &w, "read completion", RGM_ROOT);
		if (rc)
			return rc;
	}
	*value = __atomic_load_n(&b->words[w_release(b)], __ATOMIC_ACQUIRE);
	return IBC_OK;
}

static int release_wait(struct ibc_barrier *b, uint64_t id)
{
	struct rgm *g = b->priv;
	struct ibc_barrier_waiter w;
	int64_t timeout_ns = (int64_t)(b->params.timeout_us * 1e3), next = 0;
	int64_t first_nak = 0;
	int naks = 0, rc;

	ibc_barrier_waiter_init(b, &w);
	while (g->released < id) {
		rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_RECV);
		if (rc)
			return rc;
		if (g->released >= id)
			break;
		/* the timer starts at the 16th poll, not the first: a release
		 * found by then (the common case) costs no clock read */
		if (w.f.polls > 0 && (w.f.polls & 15) == 0) {
			int64_t now = ibc_timer_mono_ns();

			if (next == 0) {
				next = now + timeout_ns;
			} else if (now >= next) {
				if (naks > 0 && now - first_nak >= RGM_PULL_TIMEOUTS * timeout_ns) {
					uint64_t v = 0;

					rc = release_pull(b, &v);
					if (rc)
						return rc;
					if (v >= id) {
						b->cnt.pulls++;
						g->released = v;
						break;
					}
				} else {
					g->nak_seq++;
					rc = ibc_barrier_words_put(
						b, RGM_ROOT, w_nak(b, b->rank),
						id << RGM_NAK_SEQ_BITS |
							(g->nak_seq & ((1u << RGM_NAK_SEQ_BITS) - 1)));
					if (rc)
						return rc;
					b->cnt.naks++;
					if (naks++ == 0)
						first_nak = now;
				}
				next = now + timeout_ns;
			}
			rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
			if (rc)
				return rc;
		}
		rc = ibc_barrier_waiter_tick(b, &w, "multicast release", RGM_ROOT);
		if (rc)
			return rc;
	}
	return IBC_OK;
}

static int rgm_run(struct ibc_barrier *b, uint64_t id)
{
	struct rgm *g = b->priv;
	int i, rc, spin = g->spin && g->nmates < g->nchildren;

	rc = ibc_barrier_cq_service(b, IBC_XPORT_CQ_SEND);
	if (rc)
		return rc;
	b->cnt.gather_spins += (uint64_t)spin;
	/* the root serves NAKs meanwhile: its progress hook runs in the wait */
	for (i = 0; i < g->nchildren; i++) {
		int c = g->children[i];

		if (spin && i >= g->nmates) {
			rc = ibc_xport_spin_u64(b->x, &b->words[c], id, RGM_SPIN_US * 1000);
			if (rc == IBC_OK)
				continue;
			if (rc != IBC_ERR_TIMEOUT)
				return rc;
			spin = 0; /* out of time: yield for the rest */
			b->cnt.spin_timeouts++;
		}
		rc = ibc_barrier_words_wait(b, (size_t)c, id, c);
		if (rc)
			return rc;
	}
	if (b->rank != RGM_ROOT) {
		rc = ibc_barrier_words_put(b, g->parent, (size_t)b->rank, id);
		if (rc)
			return rc;
		rc = release_wait(b, id);
	} else {
		__atomic_store_n(&b->words[w_release(b)], id, __ATOMIC_RELEASE);
		if (b->size > 1)
			rc = release_send(b, id);
	}
	if (rc == IBC_OK && !b->inline_ok)
		rc = ibc_barrier_drain(b);
	return rc;
}

static int rgm_teardown(struct ibc_barrier *b)
{
	struct rgm *g = b->priv;
	int r, rc = IBC_OK;

	if (b->size > 1 && b->id > 0) {
		if (b->rank != RGM_ROOT) {
			/* tell the root we are out: it answers NAKs until everyone is */
			rc = ibc_barrier_words_put(b, RGM_ROOT, w_done(b, b->rank), b->id);
			if (rc == IBC_OK)
				rc = ibc_barrier_drain(b);
		} else {
			/* serving NAKs until everyone is out (the hook is still on) */
			for (r = 0; r < b->size && rc == IBC_OK; r++)
				if (r != RGM_ROOT)
					rc = ibc_barrier_words_wait(b, w_done(b, r), b->id, r);
		}
	}
	if (g->serving) {
		ibc_xport_progress_hook_remove(b->x, rgm_serve, b);
		g->serving = 0;
	}
	if (g->rmr) {
		(void)ibc_xport_mr_dereg(b->x, g->rmr);
		g->rmr = NULL;
	}
	rgm_counters(b);
	if (g->g) {
		(void)ibc_xport_mcast_leave(b->x, g->g);
		g->g = NULL;
	}
	free(g->children);
	free(g->nak_last);
	g->children = NULL;
	g->nak_last = NULL;
	return rc;
}

/* the gather up the tree of fan-in l by RDMA writes, then one multicast */
static int rgm_rounds(int n, int fanin, struct ibc_pattern_round *r, int cap)
{
	int k = ibc_pattern_knomial_rounds(n, fanin + 1, IBC_PATTERN_ROUND_WRITE, r, cap);

	if (k < 0)
		return k;
	if (k < cap)
		r[k] = (struct ibc_pattern_round){ .out = 1, .in = 1, .kind = IBC_PATTERN_ROUND_MCAST };
	return k + 1;
}

const struct ibc_barrier_alg ibc_barrier_alg_rgm = {
	.name = "rgm",
	.desc = "RDMA gather up a tree of fan-in l, then one UD multicast release "
		"(NAK + timer reliability)",
	.needs = IBC_BARRIER_NEEDS_RDMA_WRITE | IBC_BARRIER_NEEDS_RDMA_READ |
		 IBC_BARRIER_NEEDS_MULTICAST,
	.tunables = tunables,
	.setup = rgm_setup,
	.run = rgm_run,
	.teardown = rgm_teardown,
	.counters = rgm_counters,
	.rounds = rgm_rounds,
	.priv_size = sizeof(struct rgm),
};
