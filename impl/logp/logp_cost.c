/* The cost of a collective by the LoP models (logp_cost.h). */
#include "logp/logp_cost.h"

#include "core/status.h"
#include "pattern/pattern.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 32
#define MEMO 8

/* on top of enum ibc_logp_note */
enum { NOTE_SIZE = 8, NOTE_MCAST = 16, NOTE_NOG = 32, NOTE_NEG = 64, NOTE_GGP0 = 128,
       NOTE_RAWSEND = 256, NOTE_UNREAD = 512, NOTE_USERONE = 1024, NOTE_FLAGIN = 2048,
       NOTE_MCNEG = 4096, NOTE_B2B = 8192, NOTE_PEERIN = 16384, NOTE_XHALF = 32768,
       NOTE_XBLK = 65536 };

#define NO_COPY "no copy rows (logp kernels copy, copy-peer: a run before them): the " \
		"algorithm's local copies are not costed"
#define MC_NEG "<= 0: the multicast datagram's one way, RTT(" MC_KERNEL ") - RTT(" MC_BACK \
	       ", p = 1)/2, is not a time"
#define NEG_LOP "<= 0: L(k) = RTT(k)/2 - o_s(k) - o_s(1) < 0, the paper's o << L(p) fails"
#define ROUND_NEG_LOP "<= 0 in a round: o_s(k) + k L(k) with L(k) = RTT(k)/2 - o_s(k) - " \
		      "o_s(1) < 0, the paper's o << L(p) fails"
#define ROUND_NEG "<= 0 in a round: a round of messages that takes no time"
#define NO_USER "no os-write-user-all or os-write-user rows (a run before them): the " \
		"algorithm's writes into user memory are not costed"

/* LogGP's parameters on n ranks (else the largest N's), smallest size */
static const struct ibc_logp_loggp *loggp_get(const struct ibc_logp_params *pr, const char *xport,
					      int n)
{
	const struct ibc_logp_loggp *g = NULL;
	size_t i;

	for (i = 0; i < pr->nggp; i++) {
		const struct ibc_logp_loggp *c = &pr->ggp[i];

		if (strcmp(c->xport, xport) != 0)
			continue;
		if (g == NULL || (g->ranks != n && (c->ranks == n || c->ranks > g->ranks)) ||
		    (c->ranks == g->ranks && c->bytes < g->bytes))
			g = c;
	}
	return g;
}

/* ------------------------------------------------------------- LoP ----- */

/* A round trip kernel rv at (bytes, n, k): its back-to-back loop's median
 * where the run measured one and both the model (pr->rtt_b2b) and the
 * caller (b2b) ask for it, else its p50. */
static double rtt_value(const struct ibc_logp_params *pr, const char *xport, const char *rv,
			size_t bytes, int n, int k, int b2b, unsigned *notes)
{
	unsigned nb = 0;
	double v = b2b && pr->rtt_b2b ? ibc_logp_params_value(pr, xport, rv, 3, bytes, n, k, &nb)
				      : NAN;

	if (isfinite(v)) {
		*notes |= nb | NOTE_B2B;
		return v;
	}
	return ibc_logp_params_value(pr, xport, rv, 1, bytes, n, k, notes);
}

/* A round's RTT by kernel rv (rtt_value).  rtt-mcast (a datagram out, a
 * write back; k = 1): RTT/2 is the datagram's one way, RTT(rtt-mcast) -
 * RTT(rtt-write-1n, p = 1)/2; one that is <= 0 is not a time (NAN, note
 * mcast<=0). */
static double rtt_round(const struct ibc_logp_params *pr, const char *xport, const char *rv,
			size_t bytes, int n, int k, int b2b, unsigned *notes)
{
	double rtt = rtt_value(pr, xport, rv, bytes, n, k, b2b, notes);

	if (strcmp(rv, MC_KERNEL) != 0)
		return rtt;
	rtt = 2 * rtt - rtt_value(pr, xport, MC_BACK, bytes, n, 1, b2b, notes);
	if (rtt > 0)
		return rtt;
	*notes |= isfinite(rtt) ? NOTE_MCNEG : 0;
	return NAN;
}

static double kernel_at(const struct ibc_logp_params *pr, const char *xport, const char *kv,
			size_t s, int n, unsigned *notes);

/* The kernels a round is costed by: its round trip rv (rtt_kernel), its
 * post overhead ov, and, for an exchange round, the exchange kernel xv
 * (xchg_kernel) less the kernel xless (NULL: none) that xv times too and
 * the copy term adds. */
struct round_kernels {
	const char *rv, *ov, *xv, *xless;
};

/* At one measured size: v[0] = t_1:k = o_s(k) + k L(k), L(k) = RTT(k)/2 -
 * (o_s(k) + o_s(1)) (LoP as printed: its RTT timed one call at a time, as
 * its overheads are); v[1] = k RTT(k)/2, half the 1:k exchange, the same
 * kernels without the overhead algebra, RTT from the kernel's
 * back-to-back loop where measured (rtt_value); or, for an exchange round,
 * the exchange kernel's own time (less xless's), which is a round's and
 * not a round trip's.  A difference that is not a time leaves the round to
 * the round trips (note xblk~rtt: xless is the exchange of blocks'). */
static void lop_at_size(const struct ibc_logp_params *pr, const char *xport,
			const struct round_kernels *rk, size_t bytes, int n, int k, unsigned *notes,
			double *v)
{
	double o = ibc_logp_params_value(pr, xport, rk->ov, 1, bytes, n, k, notes);
	double o1 = ibc_logp_params_value(pr, xport, rk->ov, 1, bytes, n, 1, notes);
	double rtt1 = rtt_round(pr, xport, rk->rv, bytes, n, k, 0, notes), x;

	v[0] = o + k * (rtt1 / 2 - (o + o1));
	if (rk->xv != NULL) {
		x = rtt_value(pr, xport, rk->xv, bytes, n, 1, 1, notes);
		if (rk->xless == NULL) {
			v[1] = x;
			return;
		}
		x -= kernel_at(pr, xport, rk->xless, bytes, n, notes);
		if (x > 0) {
			v[1] = x;
			return;
		}
		*notes |= NOTE_XBLK;
	}
	v[1] = k * rtt_round(pr, xport, rk->rv, bytes, n, k, 1, notes) / 2;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* the sizes kernel kv was measured at on xport, ascending; how many */
static size_t kernel_sizes(const struct ibc_logp_params *pr, const char *xport, const char *kv,
			   size_t *sizes)
{
	size_t ns = 0, i, j;

	for (i = 0; i < pr->npts && ns < MAX_SIZES; i++) {
		const struct ibc_logp_point *q = &pr->pts[i];

		if (strcmp(q->variant, kv) != 0 || strcmp(q->xport, xport) != 0)
			continue;
		for (j = 0; j < ns && sizes[j] != q->bytes; j++)
			;
		if (j == ns)
			sizes[ns++] = q->bytes;
	}
	qsort(sizes, ns, sizeof(sizes[0]), cmp_size);
	return ns;
}

/* The round trip kernel of a round: a write round's rtt-write-1n, or, when
 * it carries blocks (HRWG's), rtt-write-readout-1n: the reader copies its
 * blocks out (or forwards them) before the next call, whose writes then go
 * into lines it holds (rtt-write-1n for a run before that kernel: note
 * write~unread); rtt-write-readout-flag-1n when the round's flag is a write
 * of its own on a line of its own (flag_line: HRWG's tail flag; the others
 * for a run before that kernel: note flag~inblock); a send
 * round's rtt-pool-1n, the two-sided path the collectives send on (header,
 * the receive pool's routing, the receive posted again), or rtt-send-1n,
 * the bare transport's, for a run before that kernel (note send~raw); a
 * multicast round's rtt-mcast (lop_at_size), or rtt-send-1n for a run
 * before that kernel (note mcast~send). */
static const char *rtt_kernel(const struct ibc_logp_params *pr, const char *xport,
			      const struct ibc_pattern_round *r, unsigned *notes)
{
	size_t sizes[MAX_SIZES];

	if (r->kind == IBC_PATTERN_ROUND_WRITE) {
		if (r->blocks <= 0)
			return "rtt-write-1n";
		if (r->flag_line && kernel_sizes(pr, xport, "rtt-write-readout-flag-1n", sizes) > 0)
			return "rtt-write-readout-flag-1n";
		if (r->flag_line)
			*notes |= NOTE_FLAGIN;
		if (kernel_sizes(pr, xport, "rtt-write-readout-1n", sizes) > 0)
			return "rtt-write-readout-1n";
		*notes |= NOTE_UNREAD;
		return "rtt-write-1n";
	}
	if (r->kind == IBC_PATTERN_ROUND_SEND) {
		if (kernel_sizes(pr, xport, "rtt-pool-1n", sizes) > 0)
			return "rtt-pool-1n";
		*notes |= NOTE_RAWSEND;
	}
	if (r->kind == IBC_PATTERN_ROUND_MCAST) {
		if (kernel_sizes(pr, xport, MC_KERNEL, sizes) > 0)
			return MC_KERNEL;
		*notes |= NOTE_MCAST;
	}
	return "rtt-send-1n";
}

/* The exchange kernel of a round, for LoP-RTT, where every rank sends one
 * message and awaits one at once (a pair's exchange: one out, one in):
 * for an exchange of signals (no blocks), xchg-write for a write round
 * (RPE's, RDS's, DE's) and xchg-pool for a send round (PE's, DS's: through
 * the receive pool); for an exchange of blocks by write whose flag has a
 * line of its own (HRWG's steps), xchg-write-readout-flag, less
 * copy-peer-flag (*less: the copy it times, which the copy term adds);
 * where the run measured them.  An exchange
 * is not half a ping-pong: both ends post, then both wait, and the two
 * transfers cross (Turin host, N = 2: RPE 0.28-0.30 us against half of
 * rtt-write-1n's 0.46).  NULL otherwise, with the note xchg~half (signals)
 * or xblk~rtt (blocks) for an exchange of a run before those kernels.  The
 * two-sided all-to-alls' rounds of blocks stay on their round trips: their
 * message layer is not the pool's.  LoP as printed keeps the paper's 1:n
 * round trip. */
static const char *xchg_kernel(const struct ibc_logp_params *pr, const char *xport,
			       const struct ibc_pattern_round *r, unsigned *notes, const char **less)
{
	size_t sizes[MAX_SIZES];
	const char *kv = r->kind == IBC_PATTERN_ROUND_WRITE ? XCHG_WRITE
			 : r->kind == IBC_PATTERN_ROUND_SEND ? XCHG_POOL : NULL;

	*less = NULL;
	if (kv == NULL || !r->exchange || r->out != 1 || r->in != 1)
		return NULL;
	if (r->blocks > 0 && r->kind == IBC_PATTERN_ROUND_WRITE && r->flag_line) {
		if (kernel_sizes(pr, xport, XCHG_BLOCKS, sizes) > 0 &&
		    kernel_sizes(pr, xport, CP_FLAG, sizes) > 0) {
			*less = CP_FLAG;
			return XCHG_BLOCKS;
		}
		*notes |= NOTE_XBLK;
		return NULL;
	}
	if (r->blocks > 0)
		return NULL;
	if (kernel_sizes(pr, xport, kv, sizes) > 0)
		return kv;
	*notes |= NOTE_XHALF;
	return NULL;
}

/* a round's LoP costs (v[0], v[1] as lop_at_size) on n ranks: the model at
 * the kernels' measured sizes, interpolated linearly in the round's bytes s;
 * past the largest size, LogGP's G per further byte and message */
static void lop_round(const struct ibc_logp_params *pr, const char *xport,
		      const struct ibc_pattern_round *r, size_t s, int n, unsigned *notes, double *v)
{
	struct round_kernels rk = { rtt_kernel(pr, xport, r, notes),
				    r->kind == IBC_PATTERN_ROUND_WRITE ? "os-write" : "os-send", NULL,
				    NULL };
	int k = r->kind == IBC_PATTERN_ROUND_MCAST ? 1 : r->out > r->in ? r->out : r->in;
	size_t sizes[MAX_SIZES], ns, i;
	const struct ibc_logp_loggp *g;
	double t0[2], t1[2], x;
	int m;

	v[0] = v[1] = NAN;
	if (k < 1)
		k = 1;
	rk.xv = xchg_kernel(pr, xport, r, notes, &rk.xless);
	ns = kernel_sizes(pr, xport, rk.rv, sizes);
	if (ns == 0)
		return;
	if (s <= sizes[0] || ns == 1) {
		lop_at_size(pr, xport, &rk, sizes[0], n, k, notes, t0);
		i = 0;
		if (s <= sizes[0]) {
			v[0] = t0[0];
			v[1] = t0[1];
			return;
		}
	} else {
		for (i = 0; i + 2 < ns && sizes[i + 1] < s; i++)
			;
		lop_at_size(pr, xport, &rk, sizes[i], n, k, notes, t0);
		lop_at_size(pr, xport, &rk, sizes[i + 1], n, k, notes, t1);
		x = ((double)s - (double)sizes[i]) / ((double)sizes[i + 1] - (double)sizes[i]);
		if (s <= sizes[i + 1]) {
			for (m = 0; m < 2; m++)
				v[m] = t0[m] + (t1[m] - t0[m]) * x;
			return;
		}
		i++;
		t0[0] = t1[0];
		t0[1] = t1[1];
	}
	*notes |= NOTE_SIZE;
	g = loggp_get(pr, xport, n);
	x = 0;
	if (g == NULL || !isfinite(g->G))
		*notes |= NOTE_NOG;
	else
		x = k * ((double)s - (double)sizes[i]) * g->G;
	v[0] = t0[0] + x;
	v[1] = t0[1] + x;
}

/* ------------------------------------------------------------ copies ---- */

/* One operation of s bytes by a kernel measured at p = 1 (copy: a memcpy
 * from this rank's own memory; copy-peer: out of memory a peer has just
 * written; os-write-user: posting a write into a peer's user memory) on n
 * ranks, its p50: at the measured sizes; linear in s between them; below
 * the smallest, the smallest's; past the largest, the line through the
 * last two (one size: proportional to s), note size>max.  NAN when not
 * measured. */
static double kernel_at(const struct ibc_logp_params *pr, const char *xport, const char *kv,
		       size_t s, int n, unsigned *notes)
{
	size_t sizes[MAX_SIZES], ns = kernel_sizes(pr, xport, kv, sizes), i;
	double c0, c1, x;

	if (ns == 0)
		return NAN;
	if (s <= sizes[0] || ns == 1) {
		c0 = ibc_logp_params_value(pr, xport, kv, 1, sizes[0], n, 1, notes);
		if (s <= sizes[0])
			return c0;
		*notes |= NOTE_SIZE;
		return c0 * (double)s / (double)sizes[0];
	}
	for (i = 0; i + 2 < ns && sizes[i + 1] < s; i++)
		;
	c0 = ibc_logp_params_value(pr, xport, kv, 1, sizes[i], n, 1, notes);
	c1 = ibc_logp_params_value(pr, xport, kv, 1, sizes[i + 1], n, 1, notes);
	x = ((double)s - (double)sizes[i]) / ((double)sizes[i + 1] - (double)sizes[i]);
	if (s > sizes[i + 1])
		*notes |= NOTE_SIZE;
	return c0 + (c1 - c0) * x;
}

/* A round's local copies (pattern.h), of blocks of m bytes; an eager
 * message of s <= eager bytes adds its copy in (own memory) and out (what
 * the peer wrote).  The blocks a peer wrote are costed by copy-peer-flag
 * when the round's flag has a line of its own (flag_line: the wait left the
 * blocks' lines in the writer's cache), by copy-peer otherwise (the flag is
 * the block's last word, as an eager message shares its header's line), or
 * by copy-peer for a run before copy-peer-flag (note peer~inblock).  0 for
 * a round without copies; NAN when it has some and the copy kernels were
 * not measured. */
static double copy_round(const struct ibc_logp_params *pr, const char *xport,
			 const struct ibc_pattern_round *r, size_t m, size_t s, size_t eager, int n,
			 unsigned *notes)
{
	size_t sizes[MAX_SIZES];
	double c = 0;

	if (r->copies > 0)
		c += (double)r->copies * kernel_at(pr, xport, "copy", m, n, notes);
	if (r->copies_peer > 0 && r->flag_line &&
	    kernel_sizes(pr, xport, CP_FLAG, sizes) > 0)
		c += (double)r->copies_peer * kernel_at(pr, xport, CP_FLAG, m, n, notes);
	else if (r->copies_peer > 0) {
		*notes |= r->flag_line ? NOTE_PEERIN : 0;
		c += (double)r->copies_peer * kernel_at(pr, xport, "copy-peer", m, n, notes);
	}
	if (r->eager && s <= eager)
		c += kernel_at(pr, xport, "copy", s, n, notes) +
		     kernel_at(pr, xport, "copy-peer", s, n, notes);
	return c;
}

/* a round's writes into user memory: each a post of os-write-user-all at
 * the block's size m, every rank writing into a peer's user memory at once,
 * as in the algorithms that have them (os-write-user, rank 0 alone, for a
 * run before that kernel: note user~one); 0 without; NAN when neither was
 * measured */
static double user_round(const struct ibc_logp_params *pr, const char *xport,
			 const struct ibc_pattern_round *r, size_t m, int n, unsigned *notes)
{
	size_t sizes[MAX_SIZES];
	const char *kv = "os-write-user-all";

	if (r->user_writes <= 0)
		return 0;
	if (kernel_sizes(pr, xport, kv, sizes) == 0) {
		kv = "os-write-user";
		*notes |= NOTE_USERONE;
	}
	return (double)r->user_writes * kernel_at(pr, xport, kv, m, n, notes);
}

/* ----------------------------------------------------------- LogGP ----- */

static double loggp_round(const struct ibc_logp_params *pr, const char *xport,
			  const struct ibc_pattern_round *r, size_t s, int n, unsigned *notes)
{
	const struct ibc_logp_loggp *g = loggp_get(pr, xport, n);
	int k = r->kind == IBC_PATTERN_ROUND_MCAST ? 1 : r->out > r->in ? r->out : r->in;
	double G, sz = (double)s - 1, o, gap, L;

	if (g == NULL || !isfinite(g->o) || !isfinite(g->g) || !isfinite(g->L))
		return NAN;
	G = g->G;
	if (!isfinite(G)) {
		*notes |= NOTE_NOG;
		G = 0;
	}
	/* times and a gap per byte are >= 0: a negative estimate (noise in
	 * Netgauge's differences) is held at 0 */
	o = fmax(g->o, 0);
	gap = fmax(g->g, 0);
	L = fmax(g->L, 0);
	if (o != g->o || gap != g->g || L != g->L || G < 0 || g->held)
		*notes |= NOTE_GGP0;
	G = fmax(G, 0);
	if (k < 1)
		k = 1;
	return 2 * o + L + sz * G + (k - 1) * fmax(o, gap + sz * G);
}

/* The one gate between the models' arithmetic and every output (rows,
 * extrapolation, fan-in): a value that is not finite (why: missing), or is
 * <= 0 (neg_why), is not a time; nor is a sum with a round of messages <= 0
 * in it (round_neg; round_why), however the other rounds bring it above 0.
 * It leaves as NAN, with why there is no prediction. */
static double pred_guard(double v, int round_neg, const char *missing, const char *neg_why,
			 const char *round_why, const char **why)
{
	if (!isfinite(v)) {
		*why = missing;
		return NAN;
	}
	if (!(v > 0)) {
		*why = neg_why;
		return NAN;
	}
	if (round_neg) {
		*why = round_why;
		return NAN;
	}
	*why = NULL;
	return v;
}

int ibc_logp_predict(const struct ibc_logp_params *pr, const struct ibc_logp_family *fam,
		     const char *variant, const char *xport, int n, long fanin, size_t bytes,
		     size_t eager, struct pred *out)
{
	struct {
		struct ibc_pattern_round r;
		double lop[2], loggp, copy, user;
	} memo[MEMO];
	struct ibc_pattern_round *r;
	int m = fam->rounds(variant, n, fanin, NULL, 0), k, nmemo = 0, round_neg[NMOD] = { 0 };
	double raw[NMOD] = { 0, 0, 0 }, msg[NMOD];

	memset(out, 0, sizeof(*out));
	if (m < 0)
		return m;
	r = calloc((size_t)m + 1, sizeof(*r)); /* zeroed: rounds compare by memcmp */
	if (r == NULL)
		return IBC_ERR_NOMEM;
	if (fam->rounds(variant, n, fanin, r, m) != m) {
		free(r);
		return IBC_ERR_INVAL;
	}
	out->rounds = m;
	for (k = 0; k < m; k++) {
		size_t s = r[k].blocks > 0 ? (size_t)r[k].blocks * (bytes > 0 ? bytes : 1) : 1;
		int j;

		/* schedules repeat a few kinds of round (pairwise: n - 1 alike) */
		for (j = 0; j < nmemo && memcmp(&memo[j].r, &r[k], sizeof(r[k])) != 0; j++)
			;
		if (j == nmemo) {
			j = nmemo < MEMO ? nmemo++ : MEMO - 1;
			memo[j].r = r[k];
			lop_round(pr, xport, &r[k], s, n, &out->notes, memo[j].lop);
			memo[j].loggp = loggp_round(pr, xport, &r[k], s, n, &out->notes);
			memo[j].copy = copy_round(pr, xport, &r[k], bytes > 0 ? bytes : 1, s, eager, n,
						  &out->notes);
			memo[j].user = user_round(pr, xport, &r[k], bytes > 0 ? bytes : 1, n,
						  &out->notes);
		}
		raw[M_LOP] += memo[j].lop[0];
		raw[M_LRTT] += memo[j].lop[1];
		raw[M_LOGGP] += memo[j].loggp;
		/* a round of messages takes time: one <= 0 (LoP's o_s(k) + k L(k)
		 * with L(k) < 0) is not a time, whatever the other rounds add
		 * (pred_guard) */
		round_neg[M_LOP] |= memo[j].lop[0] <= 0;
		round_neg[M_LRTT] |= memo[j].lop[1] <= 0;
		round_neg[M_LOGGP] |= memo[j].loggp <= 0;
		out->copy_us += memo[j].copy;
		out->user_us += memo[j].user;
	}
	for (k = 0; k < NMOD; k++) {
		msg[k] = raw[k];
		raw[k] += out->copy_us + out->user_us;
	}
	if (isfinite(raw[M_LOP]) && (raw[M_LOP] <= 0 || round_neg[M_LOP])) /* §4.3's o << L(p) */
		out->notes |= NOTE_NEG;
	out->v[M_LOP] = pred_guard(raw[M_LOP], round_neg[M_LOP],
				   "no usable fit or row of the rtt/os kernels", NEG_LOP, ROUND_NEG_LOP,
				   &out->why[M_LOP]);
	out->v[M_LRTT] = pred_guard(raw[M_LRTT], round_neg[M_LRTT],
				    "no usable fit or row of the rtt kernels", "<= 0", ROUND_NEG,
				    &out->why[M_LRTT]);
	for (k = M_LOP; k <= M_LRTT; k++)
		if (out->why[k] != NULL && isnan(raw[k]) && (out->notes & NOTE_MCNEG))
			out->why[k] = MC_NEG;
	out->v[M_LOGGP] = pred_guard(raw[M_LOGGP], round_neg[M_LOGGP],
				     "no LogGP parameters: no loggp-prtt rows", "<= 0", ROUND_NEG,
				     &out->why[M_LOGGP]);
	for (k = 0; k < NMOD; k++)
		if (isfinite(msg[k]) && !isfinite(out->copy_us + out->user_us))
			out->why[k] = isfinite(out->copy_us) ? NO_USER : NO_COPY;
	free(r);
	return IBC_OK;
}

void ibc_logp_notes_fmt(unsigned n, int oversub, char *b, size_t cap)
{
	static const char *const names[] = { "k>pmax", "params-of-other-N", "points", "size>max",
					     "mcast~send", "no-G", "lop<=0", "loggp<0->0", "send~raw",
					     "write~unread", "user~one", "flag~inblock", "mcast<=0",
					     "rtt~b2b", "peer~inblock", "xchg~half", "xblk~rtt" };
	size_t used = 0, i;

	b[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((n & (1u << i)) && used + 24 < cap)
			used += (size_t)snprintf(b + used, cap - used, "%s%s", used ? ";" : "", names[i]);
	if (oversub && used + 10 < cap)
		snprintf(b + used, cap - used, "%soversub", used ? ";" : "");
}
