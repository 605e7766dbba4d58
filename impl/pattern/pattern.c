/* Communication patterns: see pattern.h. */
#include "pattern/pattern.h"

#include "core/status.h"

#include <stddef.h>

static int n_ok(int n)
{
	return n >= 1 && n <= IBC_PATTERN_MAX_N;
}

static int rank_ok(int n, int rank)
{
	return n_ok(n) && rank >= 0 && rank < n;
}

int ibc_pattern_log2_floor(int n)
{
	int k = 0;

	while (n > 1) {
		n >>= 1;
		k++;
	}
	return k;
}

int ibc_pattern_log2_ceil(int n)
{
	int k = 0;
	long long p = 1;

	while (p < n) {
		p <<= 1;
		k++;
	}
	return k;
}

int ibc_pattern_pow2_is(int n)
{
	return n >= 1 && (n & (n - 1)) == 0;
}

int ibc_pattern_logk_ceil(int n, int base)
{
	int k = 0;
	long long p = 1;

	if (base < 2)
		return 0;
	while (p < n) {
		p *= base;
		k++;
	}
	return k;
}

int ibc_pattern_ring_next(int n, int rank, int dist)
{
	long long v;

	if (!n_ok(n))
		return -1;
	v = ((long long)rank + dist) % n;
	return (int)(v < 0 ? v + n : v);
}

int ibc_pattern_ring_prev(int n, int rank, int dist)
{
	long long v;

	if (!n_ok(n))
		return -1;
	v = ((long long)rank - dist) % n;
	return (int)(v < 0 ? v + n : v);
}

/* ------------------------------------------------------- dissemination -- */

int ibc_pattern_diss_nsteps(int n)
{
	return n_ok(n) ? ibc_pattern_log2_ceil(n) : 0;
}

int ibc_pattern_diss_step_get(int n, int rank, int round, struct ibc_pattern_step *out)
{
	int dist;

	if (!rank_ok(n, rank) || round < 0 || round >= ibc_pattern_diss_nsteps(n))
		return IBC_ERR_INVAL;
	dist = 1 << round; /* < n because round < ceil(log2 n) */
	out->send_to = ibc_pattern_ring_next(n, rank, dist);
	out->recv_from = ibc_pattern_ring_prev(n, rank, dist);
	return IBC_OK;
}

/* --------------------------------------------------- pairwise exchange -- */

int ibc_pattern_pe_nsteps(int n)
{
	int k;

	if (!n_ok(n))
		return 0;
	k = ibc_pattern_log2_floor(n);
	return ibc_pattern_pow2_is(n) ? k : k + 2;
}

int ibc_pattern_pe_step_get(int n, int rank, int step, struct ibc_pattern_step *out)
{
	int nsteps, pof2, extra, xchg;

	nsteps = ibc_pattern_pe_nsteps(n);
	if (!rank_ok(n, rank) || step < 0 || step >= nsteps)
		return IBC_ERR_INVAL;
	pof2 = 1 << ibc_pattern_log2_floor(n);
	extra = n - pof2;
	out->send_to = -1;
	out->recv_from = -1;
	if (extra > 0 && step == 0) { /* fold-in of the extra ranks */
		if (rank >= pof2)
			out->send_to = rank - pof2;
		else if (rank < extra)
			out->recv_from = rank + pof2;
		return IBC_OK;
	}
	if (extra > 0 && step == nsteps - 1) { /* release of the extra ranks */
		if (rank >= pof2)
			out->recv_from = rank - pof2;
		else if (rank < extra)
			out->send_to = rank + pof2;
		return IBC_OK;
	}
	xchg = extra > 0 ? step - 1 : step;
	if (rank < pof2) {
		out->send_to = rank ^ (1 << xchg);
		out->recv_from = out->send_to;
	}
	return IBC_OK;
}

/* ---------------------------------------------------------------- trees -- */

static int rel_of(int n, int root, int rank)
{
	return ibc_pattern_ring_prev(n, rank, root);
}

static int abs_of(int n, int root, int rel)
{
	return ibc_pattern_ring_next(n, rel, root);
}

/* Lowest stage with a non-zero base-radix digit of rel (rel > 0). */
static int knomial_stage_rel(int rel, int radix)
{
	int s = 0;

	while (rel % radix == 0) {
		rel /= radix;
		s++;
	}
	return s;
}

int ibc_pattern_fanin_distinct(long l, int n)
{
	return (l - 1) / 2 < n - 1;
}

int ibc_pattern_knomial_stage(int n, int radix, int root, int rank)
{
	int rel;

	if (!rank_ok(n, rank) || !rank_ok(n, root) || radix < 2)
		return -1;
	rel = rel_of(n, root, rank);
	return rel == 0 ? -1 : knomial_stage_rel(rel, radix);
}

int ibc_pattern_knomial_node_get(int n, int radix, int root, int rank,
				 int *children, int cap, struct ibc_pattern_node *out)
{
	int rel, depth, t, nc;
	long long span; /* radix^s */

	if (!rank_ok(n, rank) || !rank_ok(n, root) || radix < 2 || cap < 0 ||
	    (cap > 0 && !children))
		return IBC_ERR_INVAL;
	rel = rel_of(n, root, rank);
	out->height = ibc_pattern_logk_ceil(n, radix);
	depth = 0;
	for (t = rel; t > 0; t /= radix)
		depth += t % radix != 0;
	out->depth = depth;
	if (rel == 0) {
		out->parent = -1;
		out->stage = -1;
	} else {
		int s = knomial_stage_rel(rel, radix);
		long long p = 1;
		int k;

		for (k = 0; k < s; k++)
			p *= radix;
		out->stage = s;
		out->parent = abs_of(n, root, (int)(rel - (rel / p % radix) * p));
	}
	/* Children: in stage s a rank whose digits 0..s are zero gathers from
	 * rel + d * radix^s, d = 1 .. radix - 1. */
	nc = 0;
	for (span = 1; span < n && rel % (span * radix) == 0; span *= radix) {
		int d;

		for (d = 1; d < radix; d++) {
			long long c = rel + d * span;

			if (c >= n)
				break;
			if (children) {
				if (nc >= cap)
					return IBC_ERR_INVAL;
				children[nc] = abs_of(n, root, (int)c);
			}
			nc++;
		}
	}
	out->nchildren = nc;
	return IBC_OK;
}

int ibc_pattern_kary_node_get(int n, int arity, int root, int rank,
			      int *children, int cap, struct ibc_pattern_node *out)
{
	int rel, depth, t, nc, d, h;

	if (!rank_ok(n, rank) || !rank_ok(n, root) || arity < 1 || cap < 0 ||
	    (cap > 0 && !children))
		return IBC_ERR_INVAL;
	rel = rel_of(n, root, rank);
	depth = 0;
	for (t = rel; t > 0; t = (t - 1) / arity)
		depth++;
	out->depth = depth;
	/* height: depth of the last rank, the deepest in heap order */
	h = 0;
	for (t = n - 1; t > 0; t = (t - 1) / arity)
		h++;
	out->height = h;
	out->parent = rel == 0 ? -1 : abs_of(n, root, (rel - 1) / arity);
	out->stage = rel == 0 ? -1 : 0;
	nc = 0;
	for (d = 1; d <= arity; d++) {
		long long c = (long long)rel * arity + d;

		if (c >= n)
			break;
		if (children) {
			if (nc >= cap)
				return IBC_ERR_INVAL;
			children[nc] = abs_of(n, root, (int)c);
		}
		nc++;
	}
	out->nchildren = nc;
	return IBC_OK;
}

/* ------------------------------------------------------------ hypercube -- */

int ibc_pattern_hcube_ndims(int n)
{
	return n_ok(n) ? ibc_pattern_log2_ceil(n) : 0;
}

int ibc_pattern_hcube_partner(int n, int rank, int dim)
{
	int p;

	if (!rank_ok(n, rank) || dim < 0 || dim >= ibc_pattern_hcube_ndims(n))
		return -1;
	p = rank ^ (1 << dim);
	return p < n ? p : -1;
}

/* -------------------------------------------- combining all-to-all ---- */

static int comb_ok(enum ibc_pattern_comb kind, int n)
{
	if (!n_ok(n))
		return 0;
	return kind == IBC_PATTERN_COMB_BRUCK ||
	       (kind == IBC_PATTERN_COMB_HCUBE && ibc_pattern_pow2_is(n));
}

int ibc_pattern_comb_nsteps(enum ibc_pattern_comb kind, int n)
{
	return comb_ok(kind, n) ? ibc_pattern_log2_ceil(n) : IBC_ERR_INVAL;
}

static int comb_step_ok(enum ibc_pattern_comb kind, int n, int step)
{
	return comb_ok(kind, n) && step >= 0 && step < ibc_pattern_log2_ceil(n);
}

int ibc_pattern_comb_step_get(enum ibc_pattern_comb kind, int n, int rank, int step,
			      struct ibc_pattern_step *out)
{
	if (!comb_step_ok(kind, n, step) || !rank_ok(n, rank) || !out)
		return IBC_ERR_INVAL;
	if (kind == IBC_PATTERN_COMB_HCUBE) {
		out->send_to = rank ^ (1 << step);
		out->recv_from = out->send_to;
	} else {
		out->send_to = ibc_pattern_ring_next(n, rank, 1 << step);
		out->recv_from = ibc_pattern_ring_prev(n, rank, 1 << step);
	}
	return IBC_OK;
}

int ibc_pattern_comb_moves(enum ibc_pattern_comb kind, int n, int rank, int step, int slot)
{
	if (!comb_step_ok(kind, n, step) || !rank_ok(n, rank) || !rank_ok(n, slot))
		return -1;
	if (kind == IBC_PATTERN_COMB_HCUBE)
		return ((slot ^ rank) >> step) & 1;
	return (slot >> step) & 1;
}

int ibc_pattern_comb_nmoves(enum ibc_pattern_comb kind, int n, int step)
{
	int i, c = 0;

	if (!comb_step_ok(kind, n, step))
		return -1;
	if (kind == IBC_PATTERN_COMB_HCUBE)
		return n / 2;
	for (i = 0; i < n; i++)
		c += (i >> step) & 1;
	return c;
}

int ibc_pattern_comb_in_block(enum ibc_pattern_comb kind, int n, int rank, int slot)
{
	if (!comb_ok(kind, n) || !rank_ok(n, rank) || !rank_ok(n, slot))
		return -1;
	return kind == IBC_PATTERN_COMB_HCUBE ? slot : ibc_pattern_ring_next(n, rank, slot);
}

int ibc_pattern_comb_out_block(enum ibc_pattern_comb kind, int n, int rank, int slot)
{
	if (!comb_ok(kind, n) || !rank_ok(n, rank) || !rank_ok(n, slot))
		return -1;
	return kind == IBC_PATTERN_COMB_HCUBE ? slot : ibc_pattern_ring_prev(n, rank, slot);
}

/* ------------------------------------------------------------ rounds --- */

static void round_put(struct ibc_pattern_round *r, int cap, int i, int out, int in, long blocks,
		      enum ibc_pattern_round_kind kind)
{
	if (i < cap)
		r[i] = (struct ibc_pattern_round){ .out = out, .in = in, .blocks = blocks, .kind = kind };
}

static int rounds_args_ok(int n, struct ibc_pattern_round *r, int cap)
{
	return n >= 1 && n <= IBC_PATTERN_MAX_N && cap >= 0 && (cap == 0 || r != NULL);
}

int ibc_pattern_diss_rounds(int n, enum ibc_pattern_round_kind kind, struct ibc_pattern_round *r,
			    int cap)
{
	int k, m;

	if (!rounds_args_ok(n, r, cap))
		return IBC_ERR_INVAL;
	m = ibc_pattern_diss_nsteps(n);
	for (k = 0; k < m; k++) {
		round_put(r, cap, k, 1, 1, 0, kind);
		if (k < cap)
			r[k].exchange = 1;
	}
	return m;
}

int ibc_pattern_pe_rounds(int n, enum ibc_pattern_round_kind kind, struct ibc_pattern_round *r,
			  int cap)
{
	int k, m;

	if (!rounds_args_ok(n, r, cap))
		return IBC_ERR_INVAL;
	m = ibc_pattern_pe_nsteps(n);
	for (k = 0; k < m; k++) {
		round_put(r, cap, k, 1, 1, 0, kind);
		/* not the extra ranks' fold-in and release (first and last) */
		if (k < cap)
			r[k].exchange = ibc_pattern_pow2_is(n) || (k > 0 && k < m - 1);
	}
	return m;
}

int ibc_pattern_knomial_rounds(int n, int radix, enum ibc_pattern_round_kind kind,
			       struct ibc_pattern_round *r, int cap)
{
	long long span;
	int s = 0;

	if (!rounds_args_ok(n, r, cap) || radix < 2)
		return IBC_ERR_INVAL;
	/* the root gathers from d * radix^s, d = 1 .. radix - 1, below n */
	for (span = 1; span < n; span *= radix, s++) {
		long long in = (n - 1) / span;

		round_put(r, cap, s, 1, (int)(in < radix - 1 ? in : radix - 1), 0, kind);
	}
	return s;
}

int ibc_pattern_comb_rounds(enum ibc_pattern_comb comb, int n, enum ibc_pattern_round_kind kind,
			    struct ibc_pattern_round *r, int cap)
{
	int k, m;

	if (!rounds_args_ok(n, r, cap) || !comb_ok(comb, n))
		return IBC_ERR_INVAL;
	m = ibc_pattern_comb_nsteps(comb, n);
	for (k = 0; k < m; k++) {
		round_put(r, cap, k, 1, 1, ibc_pattern_comb_nmoves(comb, n, k), kind);
		if (k < cap) /* every rank sends its step's blocks and receives a partner's */
			r[k].exchange = 1;
	}
	return m;
}

int ibc_pattern_ring_rounds(int n, int all_at_once, enum ibc_pattern_round_kind kind,
			    struct ibc_pattern_round *r, int cap)
{
	int k;

	if (!rounds_args_ok(n, r, cap))
		return IBC_ERR_INVAL;
	if (n == 1)
		return 0;
	if (all_at_once) {
		round_put(r, cap, 0, n - 1, n - 1, 1, kind);
		if (cap > 0)
			r[0].exchange = 1;
		return 1;
	}
	for (k = 0; k < n - 1; k++) {
		round_put(r, cap, k, 1, 1, 1, kind);
		if (k < cap)
			r[k].exchange = 1;
	}
	return n - 1;
}
