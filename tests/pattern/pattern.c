/* impl/pattern: exhaustive properties for n = 1..64 and hand-checked cases. */
#include "pattern/pattern.h"
#include "core/status.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NMAX 64

static uint64_t all_bits(int n)
{
	return n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
}

/* A step schedule is consistent when every send has the matching receive
 * at the peer in the same step and vice versa. */
typedef int (*step_fn)(int n, int rank, int step, struct ibc_pattern_step *out);

static int schedule_consistent(int n, int nsteps, step_fn fn, char *why, size_t whylen)
{
	int s, i;

	for (s = 0; s < nsteps; s++) {
		for (i = 0; i < n; i++) {
			struct ibc_pattern_step st, peer;

			if (fn(n, i, s, &st) != IBC_OK) {
				snprintf(why, whylen, "step_get(%d,%d,%d) failed", n, i, s);
				return 0;
			}
			if (st.send_to >= n || st.recv_from >= n || st.send_to == i ||
			    (st.recv_from == i && n > 1)) {
				snprintf(why, whylen, "rank %d step %d: bad peer %d/%d", i, s,
					 st.send_to, st.recv_from);
				return 0;
			}
			if (st.send_to >= 0) {
				fn(n, st.send_to, s, &peer);
				if (peer.recv_from != i) {
					snprintf(why, whylen, "step %d: %d sends to %d, which waits for %d",
						 s, i, st.send_to, peer.recv_from);
					return 0;
				}
			}
			if (st.recv_from >= 0) {
				fn(n, st.recv_from, s, &peer);
				if (peer.send_to != i) {
					snprintf(why, whylen, "step %d: %d waits for %d, which sends to %d",
						 s, i, st.recv_from, peer.send_to);
					return 0;
				}
			}
		}
	}
	return 1;
}

/* Knowledge after running the first nsteps steps: bit j of known[i] says i
 * has (transitively) heard from j.  A receive learns what the sender knew
 * at the start of the step. */
static void propagate(int n, int nsteps, step_fn fn, uint64_t *known)
{
	uint64_t next[NMAX];
	int s, i;

	for (i = 0; i < n; i++)
		known[i] = (uint64_t)1 << i;
	for (s = 0; s < nsteps; s++) {
		memcpy(next, known, sizeof(next[0]) * (size_t)n);
		for (i = 0; i < n; i++) {
			struct ibc_pattern_step st;

			fn(n, i, s, &st);
			if (st.recv_from >= 0)
				next[i] |= known[st.recv_from];
		}
		memcpy(known, next, sizeof(next[0]) * (size_t)n);
	}
}

static int everyone_knows_all(int n, const uint64_t *known)
{
	int i;

	for (i = 0; i < n; i++)
		if (known[i] != all_bits(n))
			return 0;
	return 1;
}

static void test_schedule(const char *name, int n, int nsteps, int want_steps, step_fn fn)
{
	uint64_t known[NMAX];
	char why[160] = "";
	int ok;

	tap_is_int(nsteps, want_steps, "%s n=%d: %d steps", name, n, want_steps);
	ok = schedule_consistent(n, nsteps, fn, why, sizeof(why));
	if (!ok)
		tap_diag("%s", why);
	tap_ok(ok, "%s n=%d: sends and receives pair up in every step", name, n);
	propagate(n, nsteps, fn, known);
	tap_ok(everyone_knows_all(n, known), "%s n=%d: everyone heard from everyone", name, n);
	if (n > 1) {
		propagate(n, nsteps - 1, fn, known);
		tap_ok(!everyone_knows_all(n, known), "%s n=%d: one step fewer is not enough",
		       name, n);
	}
}

static void test_pe_symmetric(int n)
{
	int s, i, ok = 1, nsteps = ibc_pattern_pe_nsteps(n);

	for (s = 0; s < nsteps; s++)
		for (i = 0; i < n; i++) {
			struct ibc_pattern_step st, peer;
			int j;

			ibc_pattern_pe_step_get(n, i, s, &st);
			j = st.send_to >= 0 ? st.send_to : st.recv_from;
			if (j < 0)
				continue;
			ibc_pattern_pe_step_get(n, j, s, &peer);
			if ((peer.send_to >= 0 ? peer.send_to : peer.recv_from) != i) {
				tap_diag("step %d: %d pairs with %d but %d does not pair with %d",
					 s, i, j, j, i);
				ok = 0;
			}
		}
	tap_ok(ok, "pe n=%d: if i pairs with j in step s then j pairs with i", n);
}

/* Trees ---------------------------------------------------------------- */

typedef int (*tree_fn)(int n, int k, int root, int rank, int *children, int cap,
		       struct ibc_pattern_node *out);

static void test_tree(const char *name, tree_fn fn, int n, int k, int root, int per_stage)
{
	struct ibc_pattern_node node[NMAX] = { { 0 } };
	int children[NMAX][NMAX];
	int nparent_refs[NMAX] = { 0 };
	int i, c, ok_parent = 1, ok_agree = 1, ok_fanin = 1, ok_reach = 1, ok_height = 1;
	int maxdepth = 0;

	for (i = 0; i < n; i++) {
		/* k-nomial takes the radix l + 1, k-ary the arity */
		if (fn(n, per_stage ? k + 1 : k, root, i, children[i], NMAX, &node[i]) != IBC_OK) {
			tap_ok(0, "%s n=%d k=%d: node_get(%d)", name, n, k, i);
			return;
		}
	}
	for (i = 0; i < n; i++) {
		/* exactly one parent except the root */
		if ((i == root) != (node[i].parent == -1) || node[i].parent >= n ||
		    node[i].parent == i)
			ok_parent = 0;
		for (c = 0; c < node[i].nchildren; c++) {
			int ch = children[i][c];

			if (ch < 0 || ch >= n || node[ch].parent != i)
				ok_agree = 0;
			else
				nparent_refs[ch]++;
		}
		/* fan-in: per stage (k-nomial) or in total (k-ary) */
		if (per_stage) {
			int count[32] = { 0 };

			for (c = 0; c < node[i].nchildren; c++) {
				int st = ibc_pattern_knomial_stage(n, k + 1, root, children[i][c]);

				if (st < 0 || st >= 32 || ++count[st] > k)
					ok_fanin = 0;
				/* waiting order: stage 0 first */
				if (c > 0 && st < ibc_pattern_knomial_stage(n, k + 1, root,
									   children[i][c - 1]))
					ok_fanin = 0;
			}
		} else if (node[i].nchildren > k) {
			ok_fanin = 0;
		}
		/* following parents reaches the root in exactly depth hops */
		{
			int cur = i, hops = 0;

			while (cur != root && cur >= 0 && hops <= n) {
				cur = node[cur].parent;
				hops++;
			}
			if (cur != root || hops != node[i].depth)
				ok_reach = 0;
		}
		if (node[i].depth > maxdepth)
			maxdepth = node[i].depth;
		if (node[i].height != node[0].height)
			ok_height = 0;
	}
	for (i = 0; i < n; i++)
		if (nparent_refs[i] != (i == root ? 0 : 1))
			ok_agree = 0;
	if (maxdepth > node[0].height)
		ok_height = 0;
	tap_ok(ok_parent, "%s n=%d k=%d root=%d: one parent each but the root", name, n, k, root);
	tap_ok(ok_agree, "%s n=%d k=%d root=%d: children lists agree with parents", name, n, k,
	       root);
	tap_ok(ok_fanin, "%s n=%d k=%d root=%d: fan-in <= %d%s", name, n, k, root, k,
	       per_stage ? " per stage, stages in order" : "");
	tap_ok(ok_reach, "%s n=%d k=%d root=%d: everyone reaches the root in depth hops", name,
	       n, k, root);
	tap_ok(ok_height, "%s n=%d k=%d root=%d: depth <= height", name, n, k, root);
	if (per_stage)
		tap_is_int(node[0].height, ibc_pattern_logk_ceil(n, k + 1),
			   "%s n=%d k=%d: height = ceil(log_%d n)", name, n, k, k + 1);
}

static void test_hcube_ring(int n)
{
	int i, d, ok_h = 1, ok_r = 1;

	for (i = 0; i < n; i++) {
		for (d = 0; d < ibc_pattern_hcube_ndims(n); d++) {
			int p = ibc_pattern_hcube_partner(n, i, d);

			if (p == -1) {
				if (ibc_pattern_pow2_is(n) || (i ^ (1 << d)) < n)
					ok_h = 0;
				continue;
			}
			if (p == i || p >= n || ibc_pattern_hcube_partner(n, p, d) != i)
				ok_h = 0;
		}
		for (d = -n - 1; d <= 2 * n; d++) {
			int nx = ibc_pattern_ring_next(n, i, d);

			if (nx < 0 || nx >= n || ibc_pattern_ring_prev(n, nx, d) != i ||
			    ((long long)nx - i - d) % n != 0)
				ok_r = 0;
		}
	}
	tap_ok(ok_h, "hypercube n=%d: partners are mutual, -1 only beyond n", n);
	tap_ok(ok_r, "ring n=%d: next and prev are inverse", n);
}

static void test_hand_checked(void)
{
	struct ibc_pattern_step st;
	struct ibc_pattern_node nd;
	int ch[16];

	/* dissemination, n = 5, rank 0: to 1, 2, 4; from 4, 3, 1 */
	ibc_pattern_diss_step_get(5, 0, 0, &st);
	tap_ok(st.send_to == 1 && st.recv_from == 4, "diss n=5 rank 0 round 0: 1 / 4");
	ibc_pattern_diss_step_get(5, 0, 1, &st);
	tap_ok(st.send_to == 2 && st.recv_from == 3, "diss n=5 rank 0 round 1: 2 / 3");
	ibc_pattern_diss_step_get(5, 0, 2, &st);
	tap_ok(st.send_to == 4 && st.recv_from == 1, "diss n=5 rank 0 round 2: 4 / 1");
	tap_is_int(ibc_pattern_diss_step_get(5, 0, 3, &st), IBC_ERR_INVAL,
		   "diss n=5: round 3 does not exist");

	/* pairwise exchange, n = 6: p = 4, extras 4, 5 */
	tap_is_int(ibc_pattern_pe_nsteps(6), 4, "pe n=6: floor(log2 6) + 2 = 4 steps");
	tap_is_int(ibc_pattern_pe_nsteps(8), 3, "pe n=8: 3 steps");
	ibc_pattern_pe_step_get(6, 4, 0, &st);
	tap_ok(st.send_to == 0 && st.recv_from == -1, "pe n=6 rank 4 step 0: folds into 0");
	ibc_pattern_pe_step_get(6, 4, 1, &st);
	tap_ok(st.send_to == -1 && st.recv_from == -1, "pe n=6 rank 4 step 1: idle");
	ibc_pattern_pe_step_get(6, 4, 3, &st);
	tap_ok(st.send_to == -1 && st.recv_from == 0, "pe n=6 rank 4 step 3: released by 0");
	ibc_pattern_pe_step_get(6, 0, 0, &st);
	tap_ok(st.send_to == -1 && st.recv_from == 4, "pe n=6 rank 0 step 0: waits for 4");
	ibc_pattern_pe_step_get(6, 0, 1, &st);
	tap_ok(st.send_to == 1 && st.recv_from == 1, "pe n=6 rank 0 step 1: exchanges with 1");
	ibc_pattern_pe_step_get(6, 0, 2, &st);
	tap_ok(st.send_to == 2 && st.recv_from == 2, "pe n=6 rank 0 step 2: exchanges with 2");
	ibc_pattern_pe_step_get(6, 3, 0, &st);
	tap_ok(st.send_to == -1 && st.recv_from == -1, "pe n=6 rank 3 step 0: idle");

	/* Kini et al. Fig. 2: n = 8, fan-in 3: 1,2,3 -> 0; 5,6,7 -> 4; 4 -> 0 */
	ibc_pattern_knomial_node_get(8, 4, 0, 0, ch, 16, &nd);
	tap_ok(nd.nchildren == 4 && ch[0] == 1 && ch[1] == 2 && ch[2] == 3 && ch[3] == 4 &&
	       nd.height == 2 && nd.parent == -1,
	       "knomial n=8 l=3: root gathers 1,2,3 then 4; 2 stages");
	ibc_pattern_knomial_node_get(8, 4, 0, 4, ch, 16, &nd);
	tap_ok(nd.nchildren == 3 && ch[0] == 5 && ch[2] == 7 && nd.parent == 0 && nd.stage == 1,
	       "knomial n=8 l=3: 4 gathers 5,6,7 and signals 0 in stage 1");
	ibc_pattern_knomial_node_get(8, 4, 0, 7, ch, 16, &nd);
	tap_ok(nd.nchildren == 0 && nd.parent == 4 && nd.depth == 2, "knomial n=8 l=3: 7 -> 4");
	/* binomial (l = 1), n = 8 */
	ibc_pattern_knomial_node_get(8, 2, 0, 0, ch, 16, &nd);
	tap_ok(nd.nchildren == 3 && ch[0] == 1 && ch[1] == 2 && ch[2] == 4 && nd.height == 3,
	       "knomial n=8 l=1: root gathers 1, 2, 4");
	ibc_pattern_knomial_node_get(8, 2, 0, 6, ch, 16, &nd);
	tap_ok(nd.parent == 4 && nd.nchildren == 1 && ch[0] == 7, "knomial n=8 l=1: 6 -> 4, child 7");
	/* rooted elsewhere: n = 5, root 3, l = 1: rel 1 = rank 4 -> 3, rel 4 = rank 2 -> 3 */
	ibc_pattern_knomial_node_get(5, 2, 3, 2, ch, 16, &nd);
	tap_ok(nd.parent == 3 && nd.stage == 2, "knomial n=5 l=1 root 3: 2 -> 3 in stage 2");
	tap_is_int(ibc_pattern_knomial_node_get(8, 4, 0, 0, ch, 2, &nd), IBC_ERR_INVAL,
		   "knomial: too small children array is an error");
	/* k-ary heap, n = 8, k = 3 */
	ibc_pattern_kary_node_get(8, 3, 0, 0, ch, 16, &nd);
	tap_ok(nd.nchildren == 3 && ch[0] == 1 && ch[2] == 3 && nd.height == 2,
	       "kary n=8 k=3: root children 1,2,3");
	ibc_pattern_kary_node_get(8, 3, 0, 7, ch, 16, &nd);
	tap_ok(nd.parent == 2 && nd.depth == 2, "kary n=8 k=3: 7 -> 2");

	tap_is_int(ibc_pattern_hcube_partner(6, 1, 2), 5, "hypercube n=6: 1 ^ 4 = 5");
	tap_is_int(ibc_pattern_hcube_partner(6, 3, 2), -1, "hypercube n=6: 3 ^ 4 = 7 is absent");
	tap_is_int(ibc_pattern_ring_prev(5, 0, 2), 3, "ring n=5: 0 - 2 = 3");
	tap_is_int(ibc_pattern_log2_ceil(1), 0, "log2_ceil(1) = 0");
	tap_is_int(ibc_pattern_log2_ceil(9), 4, "log2_ceil(9) = 4");
	tap_is_int(ibc_pattern_log2_floor(9), 3, "log2_floor(9) = 3");
	tap_is_int(ibc_pattern_logk_ceil(64, 8), 2, "logk_ceil(64, 8) = 2");
	tap_is_int(ibc_pattern_logk_ceil(65, 8), 3, "logk_ceil(65, 8) = 3");
	tap_is_int(ibc_pattern_diss_step_get(0, 0, 0, &st), IBC_ERR_INVAL, "diss n=0 rejected");
	tap_is_int(ibc_pattern_pe_step_get(4, 4, 0, &st), IBC_ERR_INVAL, "pe rank 4 of 4 rejected");
}

/* A combining all-to-all schedule delivers every block to its destination:
 * simulated with (source, destination) tags for every rank. */
static void test_comb(enum ibc_pattern_comb kind, const char *name, int n)
{
	static int src[NMAX][NMAX], dst[NMAX][NMAX], nsrc[NMAX][NMAX], ndst[NMAX][NMAX];
	int i, k, s, nsteps = ibc_pattern_comb_nsteps(kind, n), ok = 1;
	char why[160] = "";

	for (i = 0; i < n; i++)
		for (k = 0; k < n; k++) {
			src[i][k] = i;
			dst[i][k] = ibc_pattern_comb_in_block(kind, n, i, k);
		}
	for (s = 0; s < nsteps && ok; s++) {
		int want = ibc_pattern_comb_nmoves(kind, n, s);

		memcpy(nsrc, src, sizeof(src));
		memcpy(ndst, dst, sizeof(dst));
		for (i = 0; i < n && ok; i++) {
			struct ibc_pattern_step st, from;
			int kr = 0, ks = 0, cnt = 0;

			ibc_pattern_comb_step_get(kind, n, i, s, &st);
			ibc_pattern_comb_step_get(kind, n, st.recv_from, s, &from);
			if (from.send_to != i) {
				snprintf(why, sizeof(why), "step %d: %d receives from %d, which sends to %d",
					 s, i, st.recv_from, from.send_to);
				ok = 0;
				break;
			}
			/* the sender's moving slots, in order, into mine, in order */
			for (k = 0; k < n; k++) {
				if (ibc_pattern_comb_moves(kind, n, i, s, k) != 1)
					continue;
				cnt++;
				while (ks < n && ibc_pattern_comb_moves(kind, n, st.recv_from, s, ks) != 1)
					ks++;
				if (ks >= n)
					break;
				nsrc[i][k] = src[st.recv_from][ks];
				ndst[i][k] = dst[st.recv_from][ks];
				ks++;
				kr++;
			}
			if (cnt != want || kr != want) {
				snprintf(why, sizeof(why), "step %d rank %d: %d moves, %d received, want %d",
					 s, i, cnt, kr, want);
				ok = 0;
			}
		}
		memcpy(src, nsrc, sizeof(src));
		memcpy(dst, ndst, sizeof(dst));
	}
	for (i = 0; i < n && ok; i++)
		for (k = 0; k < n && ok; k++)
			if (dst[i][k] != i || src[i][k] != ibc_pattern_comb_out_block(kind, n, i, k)) {
				snprintf(why, sizeof(why), "rank %d slot %d holds %d->%d", i, k,
					 src[i][k], dst[i][k]);
				ok = 0;
			}
	if (!ok)
		tap_diag("%s", why);
	tap_ok(ok && nsteps == ibc_pattern_log2_ceil(n), "%s all-to-all n=%d: every block arrives",
	       name, n);
}

/* The rounds for cost models against the schedules they summarise: as
 * many rounds as steps, and per round what the busiest rank does there. */
static void test_rounds(int n)
{
	static struct ibc_pattern_round r[NMAX + 2];
	static int children[NMAX];
	static const int radices[] = { 2, 4, 8, 16 };
	int m, k, rank, ok, j;
	size_t f;

	m = ibc_pattern_diss_rounds(n, IBC_PATTERN_ROUND_WRITE, r, NMAX);
	ok = m == ibc_pattern_diss_nsteps(n);
	for (k = 0; ok && k < m; k++)
		ok = r[k].out == 1 && r[k].in == 1 && r[k].blocks == 0 &&
		     r[k].kind == IBC_PATTERN_ROUND_WRITE && r[k].exchange;
	tap_ok(ok, "diss rounds n=%d: %d of one signal, each an exchange", n, m);
	m = ibc_pattern_pe_rounds(n, IBC_PATTERN_ROUND_SEND, r, NMAX);
	ok = m == ibc_pattern_pe_nsteps(n);
	for (k = 0; ok && k < m; k++) {
		int busy = 0, both = 1;

		for (rank = 0; rank < n; rank++) {
			struct ibc_pattern_step st;

			ibc_pattern_pe_step_get(n, rank, k, &st);
			busy |= st.send_to >= 0;
			both &= (st.send_to >= 0) == (st.recv_from >= 0);
		}
		ok = busy && r[k].out == 1 && r[k].kind == IBC_PATTERN_ROUND_SEND &&
		     r[k].exchange == both;
	}
	tap_ok(ok, "pe rounds n=%d: one per step (%d), an exchange where every rank that sends "
	       "also receives", n, m);
	for (f = 0; f < sizeof(radices) / sizeof(radices[0]); f++) {
		int radix = radices[f];

		m = ibc_pattern_knomial_rounds(n, radix, IBC_PATTERN_ROUND_WRITE, r, NMAX);
		ok = m == (n == 1 ? 0 : ibc_pattern_logk_ceil(n, radix));
		for (k = 0; ok && k < m; k++) {
			int most = 0;

			/* the most children any rank gathers in stage k */
			for (rank = 0; rank < n; rank++) {
				struct ibc_pattern_node nd;
				int c = 0;

				ibc_pattern_knomial_node_get(n, radix, 0, rank, children, NMAX, &nd);
				for (j = 0; j < nd.nchildren; j++)
					c += ibc_pattern_knomial_stage(n, radix, 0, children[j]) == k;
				most = c > most ? c : most;
			}
			ok = r[k].in == most && r[k].out == 1 && !r[k].exchange;
		}
		tap_ok(ok, "knomial rounds n=%d radix=%d: %d stages, the busiest parent's children, "
		       "none an exchange", n, radix, m);
	}
	m = ibc_pattern_comb_rounds(IBC_PATTERN_COMB_BRUCK, n, IBC_PATTERN_ROUND_SEND, r, NMAX);
	ok = m == ibc_pattern_comb_nsteps(IBC_PATTERN_COMB_BRUCK, n);
	for (k = 0; ok && k < m; k++)
		ok = r[k].blocks == ibc_pattern_comb_nmoves(IBC_PATTERN_COMB_BRUCK, n, k);
	tap_ok(ok, "bruck rounds n=%d: blocks = slots moved", n);
	for (f = 0; f < 2; f++) { /* every rank sends and receives in each step: an exchange */
		enum ibc_pattern_comb c = f ? IBC_PATTERN_COMB_HCUBE : IBC_PATTERN_COMB_BRUCK;
		int both = 1;

		if (c == IBC_PATTERN_COMB_HCUBE && !ibc_pattern_pow2_is(n))
			continue;
		m = ibc_pattern_comb_rounds(c, n, IBC_PATTERN_ROUND_WRITE, r, NMAX);
		for (k = 0; k < m; k++)
			for (rank = 0; rank < n; rank++) {
				struct ibc_pattern_step st;

				ibc_pattern_comb_step_get(c, n, rank, k, &st);
				both &= st.send_to >= 0 && st.recv_from >= 0 && r[k].exchange;
			}
		tap_ok(m >= 0 && both, "%s rounds n=%d: every step an exchange, every rank sending and "
		       "receiving", f ? "hypercube" : "bruck", n);
	}
	m = ibc_pattern_ring_rounds(n, 0, IBC_PATTERN_ROUND_SEND, r, NMAX);
	for (ok = 1, k = 0; k < m; k++)
		ok &= r[k].exchange;
	ok &= n == 1 || (ibc_pattern_ring_rounds(n, 1, IBC_PATTERN_ROUND_WRITE, r, NMAX) == 1 &&
			 r[0].exchange);
	tap_ok(ok, "ring rounds n=%d: every step an exchange, all at once too", n);
	tap_ok(ibc_pattern_ring_rounds(n, 1, IBC_PATTERN_ROUND_WRITE, r, NMAX) == (n > 1) &&
		       (n == 1 || (r[0].out == n - 1 && r[0].in == n - 1 && r[0].blocks == 1)) &&
		       ibc_pattern_ring_rounds(n, 0, IBC_PATTERN_ROUND_SEND, r, NMAX) == n - 1,
	       "ring rounds n=%d: all at once, or n - 1 steps", n);
	/* a short array: the count, nothing written past it */
	r[0].out = -7;
	tap_ok(ibc_pattern_ring_rounds(n, 0, IBC_PATTERN_ROUND_SEND, r, 0) == n - 1 && r[0].out == -7,
	       "ring rounds n=%d: cap 0 counts only", n);
}

int main(void)
{
	static const int fanins[] = { 1, 2, 3, 7, 15, 63 };
	int n;
	size_t f;

	tap_plan_none();
	test_hand_checked();
	for (n = 1; n <= NMAX; n++) {
		test_schedule("diss", n, ibc_pattern_diss_nsteps(n), ibc_pattern_log2_ceil(n),
			      ibc_pattern_diss_step_get);
		test_schedule("pe", n, ibc_pattern_pe_nsteps(n),
			      ibc_pattern_pow2_is(n) ? ibc_pattern_log2_floor(n)
						     : ibc_pattern_log2_floor(n) + 2,
			      ibc_pattern_pe_step_get);
		test_pe_symmetric(n);
		for (f = 0; f < sizeof(fanins) / sizeof(fanins[0]); f++) {
			test_tree("knomial", ibc_pattern_knomial_node_get, n, fanins[f], 0, 1);
			test_tree("knomial", ibc_pattern_knomial_node_get, n, fanins[f], n / 2, 1);
			test_tree("kary", ibc_pattern_kary_node_get, n, fanins[f], 0, 0);
		}
		test_hcube_ring(n);
		test_rounds(n);
		test_comb(IBC_PATTERN_COMB_BRUCK, "bruck", n);
		if (ibc_pattern_pow2_is(n))
			test_comb(IBC_PATTERN_COMB_HCUBE, "hypercube", n);
		else
			tap_ok(ibc_pattern_comb_nsteps(IBC_PATTERN_COMB_HCUBE, n) < 0,
			       "hypercube all-to-all n=%d refused", n);
	}
	tap_ok(ibc_pattern_fanin_distinct(1, 2) && !ibc_pattern_fanin_distinct(3, 2) &&
		       ibc_pattern_fanin_distinct(3, 6) && ibc_pattern_fanin_distinct(7, 6) &&
		       !ibc_pattern_fanin_distinct(15, 6) && ibc_pattern_fanin_distinct(7, 8) &&
		       !ibc_pattern_fanin_distinct(15, 8) && ibc_pattern_fanin_distinct(15, 12),
	       "fan-in sweep: up to the first l >= n - 1 (n=2: 1; n=6: 1, 3, 7; n=8: .., 7; "
	       "n=12: .., 15)");
	tap_ok(ibc_pattern_diss_rounds(0, IBC_PATTERN_ROUND_WRITE, NULL, 0) < 0 &&
		       ibc_pattern_knomial_rounds(4, 1, IBC_PATTERN_ROUND_WRITE, NULL, 0) < 0 &&
		       ibc_pattern_comb_rounds(IBC_PATTERN_COMB_HCUBE, 6, IBC_PATTERN_ROUND_SEND, NULL,
					       0) < 0,
	       "rounds: bad n, radix 1, a hypercube of 6 refused");
	return tap_done();
}
