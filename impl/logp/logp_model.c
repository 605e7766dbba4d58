/* The LoP closed loop (logp_model.h). */
#include "logp/logp_model.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"
#include "logp/logp_fits.h"
#include "pattern/pattern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STAT "p50"
#define MAX_SIZES 32
#define MAX_ALGS 64
#define MEMO 8
static const int extra_n[] = { 1024, 4096, 16384, 65536 };
#define NEXTRA (sizeof(extra_n) / sizeof(extra_n[0]))

/* on top of enum ibc_logp_note */
enum { NOTE_SIZE = 8, NOTE_MCAST = 16, NOTE_NOG = 32, NOTE_NEG = 64 };

struct pred {
	double lop, lrtt, loggp; /* NAN when the model lacks what it needs */
	unsigned notes;
	int rounds;
};

static double num(const char *c)
{
	return c != NULL && *c ? strtod(c, NULL) : NAN;
}

/* What a row's prediction is compared with: its back-to-back figure
 * (paper_us: Kini et al.'s method for the barrier; Sur et al. put an
 * MPI_Barrier before every all-to-all), else p50_us; *as names which. */
static double measured(const struct ibc_csv_table *t, size_t r, const char **as)
{
	char b2b[32];
	double v = ibc_csv_extra_get(ibc_csv_cell(t, r, "extra"), "paper_us", b2b, sizeof(b2b))
			   ? num(b2b) : NAN;

	*as = "paper_us";
	if (!isfinite(v) || v <= 0) {
		*as = "p50_us";
		v = ibc_csv_num(t, r, "p50_us");
	}
	return v;
}

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

/* At one measured size: v[0] = t_1:k = o_s(k) + k L(k), L(k) = RTT(k)/2 -
 * (o_s(k) + o_s(1)) (LoP as printed); v[1] = k RTT(k)/2, half the 1:k
 * exchange, the same kernels without the overhead algebra. */
static void lop_at_size(const struct ibc_logp_params *pr, const char *xport, const char *rv,
			const char *ov, size_t bytes, int n, int k, unsigned *notes, double *v)
{
	double o = ibc_logp_params_value(pr, xport, ov, 1, bytes, n, k, notes);
	double o1 = ibc_logp_params_value(pr, xport, ov, 1, bytes, n, 1, notes);
	double rtt = ibc_logp_params_value(pr, xport, rv, 1, bytes, n, k, notes);

	v[0] = o + k * (rtt / 2 - (o + o1));
	v[1] = k * rtt / 2;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* a round's LoP costs (v[0], v[1] as lop_at_size) on n ranks: the model at
 * the kernels' measured sizes, interpolated linearly in the round's bytes s;
 * past the largest size, LogGP's G per further byte and message */
static void lop_round(const struct ibc_logp_params *pr, const char *xport,
		      const struct ibc_pattern_round *r, size_t s, int n, unsigned *notes, double *v)
{
	const char *rv = r->kind == IBC_PATTERN_ROUND_WRITE ? "rtt-write-1n" : "rtt-send-1n";
	const char *ov = r->kind == IBC_PATTERN_ROUND_WRITE ? "os-write" : "os-send";
	int k = r->kind == IBC_PATTERN_ROUND_MCAST ? 1 : r->out > r->in ? r->out : r->in;
	size_t sizes[MAX_SIZES], ns = 0, i, j;
	const struct ibc_logp_loggp *g;
	double t0[2], t1[2], x;
	int m;

	v[0] = v[1] = NAN;
	if (k < 1)
		k = 1;
	if (r->kind == IBC_PATTERN_ROUND_MCAST)
		*notes |= NOTE_MCAST;
	for (i = 0; i < pr->npts && ns < MAX_SIZES; i++) {
		const struct ibc_logp_point *q = &pr->pts[i];

		if (strcmp(q->variant, rv) != 0 || strcmp(q->xport, xport) != 0)
			continue;
		for (j = 0; j < ns && sizes[j] != q->bytes; j++)
			;
		if (j == ns)
			sizes[ns++] = q->bytes;
	}
	if (ns == 0)
		return;
	qsort(sizes, ns, sizeof(sizes[0]), cmp_size);
	if (s <= sizes[0] || ns == 1) {
		lop_at_size(pr, xport, rv, ov, sizes[0], n, k, notes, t0);
		i = 0;
		if (s <= sizes[0]) {
			v[0] = t0[0];
			v[1] = t0[1];
			return;
		}
	} else {
		for (i = 0; i + 2 < ns && sizes[i + 1] < s; i++)
			;
		lop_at_size(pr, xport, rv, ov, sizes[i], n, k, notes, t0);
		lop_at_size(pr, xport, rv, ov, sizes[i + 1], n, k, notes, t1);
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

/* ----------------------------------------------------------- LogGP ----- */

static double loggp_round(const struct ibc_logp_params *pr, const char *xport,
			  const struct ibc_pattern_round *r, size_t s, int n, unsigned *notes)
{
	const struct ibc_logp_loggp *g = loggp_get(pr, xport, n);
	int k = r->kind == IBC_PATTERN_ROUND_MCAST ? 1 : r->out > r->in ? r->out : r->in;
	double G, sz = (double)s - 1;

	if (g == NULL || !isfinite(g->o) || !isfinite(g->g) || !isfinite(g->L))
		return NAN;
	G = g->G;
	if (!isfinite(G)) {
		*notes |= NOTE_NOG;
		G = 0;
	}
	if (k < 1)
		k = 1;
	return 2 * g->o + g->L + sz * G + (k - 1) * fmax(g->o, g->g + sz * G);
}

/* Both models over the rounds of (fam, variant) on n ranks. */
static int predict(const struct ibc_logp_params *pr, const struct ibc_logp_family *fam,
		   const char *variant, const char *xport, int n, long fanin, size_t bytes,
		   struct pred *out)
{
	struct {
		struct ibc_pattern_round r;
		double lop[2], loggp;
	} memo[MEMO];
	struct ibc_pattern_round *r;
	int m = fam->rounds(variant, n, fanin, NULL, 0), k, nmemo = 0;

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
		}
		out->lop += memo[j].lop[0];
		out->lrtt += memo[j].lop[1];
		out->loggp += memo[j].loggp;
	}
	if (out->lop <= 0) /* §4.3's o << L(p) does not hold: not a time */
		out->notes |= NOTE_NEG;
	free(r);
	return IBC_OK;
}

static void notes_fmt(unsigned n, int oversub, char *b, size_t cap)
{
	static const char *const names[] = { "k>pmax", "params-of-other-N", "points", "size>max",
					     "mcast~send", "no-G", "lop<=0" };
	size_t used = 0, i;

	b[0] = '\0';
	for (i = 0; i < 7; i++)
		if ((n & (1u << i)) && used + 24 < cap)
			used += (size_t)snprintf(b + used, cap - used, "%s%s", used ? ";" : "", names[i]);
	if (oversub && used + 10 < cap)
		snprintf(b + used, cap - used, "%soversub", used ? ";" : "");
}

static void fmtd(char *b, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(b, cap, "%.4g", v);
	else
		b[0] = '\0';
}

/* ------------------------------------------------------- the tables ---- */

struct alg_err {
	char suite[16], variant[40];
	double lop, lrtt, loggp;   /* sums of |err| */
	int nl, nr, ng;
};

static const struct ibc_logp_family *fam_of(const struct ibc_logp_model_opts *o, const char *suite)
{
	size_t i;

	for (i = 0; i < o->nfams; i++)
		if (strcmp(o->fams[i].suite, suite) == 0)
			return &o->fams[i];
	return NULL;
}

static struct alg_err *alg_get(struct alg_err *a, size_t *n, const char *suite, const char *variant)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(a[i].suite, suite) == 0 && strcmp(a[i].variant, variant) == 0)
			return &a[i];
	if (*n == MAX_ALGS)
		return NULL;
	memset(&a[*n], 0, sizeof(a[*n]));
	snprintf(a[*n].suite, sizeof(a[*n].suite), "%s", suite);
	snprintf(a[*n].variant, sizeof(a[*n].variant), "%s", variant);
	return &a[(*n)++];
}

static const char *const model_cols[] = { "suite", "variant", "xport", "ranks", "bytes", "fanin",
					  "oversub", "measured_us", "measured_as", "p50_us", "lop_us",
					  "lop_err", "lop_rtt_us", "lop_rtt_err", "loggp_us", "loggp_err",
					  "rounds", "note" };
#define NMODEL (sizeof(model_cols) / sizeof(model_cols[0]))
static const char *const extra_cols[] = { "suite", "variant", "xport", "ranks", "bytes", "fanin",
					  "lop_us", "lop_rtt_us", "loggp_us", "rounds", "method", "note" };
#define NEXTRACOLS (sizeof(extra_cols) / sizeof(extra_cols[0]))
static const char *const fanin_cols[] = { "xport", "ranks", "lop_best_fanin", "lop_us",
					  "lop_rtt_best_fanin", "lop_rtt_us", "loggp_best_fanin",
					  "loggp_us", "measured_best_fanin", "measured_us" };
#define NFANIN (sizeof(fanin_cols) / sizeof(fanin_cols[0]))

/* the measured rows, predicted; per algorithm errors into a */
static int rows_predict(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
			const struct ibc_logp_params *pr, struct ibc_csv_writer *w,
			struct alg_err *a, size_t *na, size_t *npred)
{
	size_t r;
	int rc = IBC_OK;

	if (o->out != NULL)
		fprintf(o->out, "%-9s %-11s %-5s %5s %8s %5s %10s %10s %7s %10s %7s %10s %7s  %s\n",
			"suite", "variant", "xport", "N", "bytes", "fanin", "meas_us", "LoP_us", "err",
			"LoPrtt_us", "err", "LogGP_us", "err", "note");
	for (r = 0; r + 1 < t->nrows && rc == IBC_OK; r++) {
		const char *suite = ibc_csv_cell(t, r, "suite"), *variant = ibc_csv_cell(t, r, "variant");
		const char *xport = ibc_csv_cell(t, r, "xport"), *ov = ibc_csv_cell(t, r, "oversub");
		const struct ibc_logp_family *fam = fam_of(o, suite);
		int n = ibc_csv_int(t, r, "ranks");
		double fan = ibc_csv_num(t, r, "fanin"), p50 = ibc_csv_num(t, r, "p50_us");
		const char *as;
		double meas = measured(t, r, &as);
		size_t bytes = ibc_csv_size(t, r, "bytes");
		int oversub = ov != NULL && strcmp(ov, "1") == 0;
		char f[NMODEL][64], note[128];
		const char *fp[NMODEL];
		struct pred p;
		struct alg_err *ae;
		size_t i;

		if (fam == NULL || strcmp(ibc_csv_str(t, r, "impl"), "ibchar") != 0 || !isfinite(meas) ||
		    meas <= 0 || n < 1)
			continue;
		if (predict(pr, fam, variant, xport, n, isfinite(fan) ? (long)fan : 0, bytes, &p) !=
		    IBC_OK)
			continue;
		notes_fmt(p.notes, oversub, note, sizeof(note));
		for (i = 0; i < NMODEL; i++)
			fp[i] = f[i];
		fp[0] = suite;
		fp[1] = variant;
		fp[2] = xport;
		snprintf(f[3], 64, "%d", n);
		snprintf(f[4], 64, "%zu", bytes);
		fp[5] = ibc_csv_cell(t, r, "fanin");
		snprintf(f[6], 64, "%d", oversub);
		fmtd(f[7], 64, meas);
		fp[8] = as;
		fmtd(f[9], 64, p50);
		fmtd(f[10], 64, p.lop);
		fmtd(f[11], 64, p.lop / meas - 1);
		fmtd(f[12], 64, p.lrtt);
		fmtd(f[13], 64, p.lrtt / meas - 1);
		fmtd(f[14], 64, p.loggp);
		fmtd(f[15], 64, p.loggp / meas - 1);
		snprintf(f[16], 64, "%d", p.rounds);
		fp[17] = note;
		rc = ibc_csv_writer_row(w, fp);
		(*npred)++;
		ae = alg_get(a, na, suite, variant);
		if (ae != NULL && isfinite(p.lop)) {
			ae->lop += fabs(p.lop / meas - 1);
			ae->nl++;
		}
		if (ae != NULL && isfinite(p.lrtt)) {
			ae->lrtt += fabs(p.lrtt / meas - 1);
			ae->nr++;
		}
		if (ae != NULL && isfinite(p.loggp)) {
			ae->loggp += fabs(p.loggp / meas - 1);
			ae->ng++;
		}
		if (o->out != NULL)
			fprintf(o->out, "%-9s %-11s %-5s %5d %8zu %5s %10.3f %10s %7s %10s %7s %10s %7s  %s\n",
				suite, variant, xport, n, bytes, fp[5], meas, f[10], f[11], f[12], f[13],
				f[14], f[15], note);
	}
	return rc;
}

/* the measured (suite, variant, xport, bytes, fanin) at N = 1 K .. 64 K */
static int extrapolate(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
		       const struct ibc_logp_params *pr, struct ibc_csv_writer *w)
{
	size_t r, q, e;
	int rc = IBC_OK;

	if (o->out != NULL)
		fprintf(o->out, "\nextrapolation (the fitted model evaluated over the pattern's rounds; "
			"no contention modelled):\n%-9s %-11s %-5s %8s %5s %20s %20s %20s %20s  (LoP | "
			"LoP-RTT | LogGP, us)\n", "suite", "variant", "xport", "bytes", "fanin", "N=1K",
			"4K", "16K", "64K");
	for (r = 0; r + 1 < t->nrows && rc == IBC_OK; r++) {
		const char *suite = ibc_csv_cell(t, r, "suite"), *variant = ibc_csv_cell(t, r, "variant");
		const char *xport = ibc_csv_cell(t, r, "xport"), *fanc = ibc_csv_cell(t, r, "fanin");
		const char *bc = ibc_csv_cell(t, r, "bytes");
		const struct ibc_logp_family *fam = fam_of(o, suite);
		char line[512], f[NEXTRACOLS][64], note[128];
		const char *fp[NEXTRACOLS];
		size_t used = 0, i;
		int seen = 0;

		if (fam == NULL || strcmp(ibc_csv_str(t, r, "impl"), "ibchar") != 0)
			continue;
		/* once per (suite, variant, xport, bytes, fanin) */
		for (q = 0; q < r && !seen; q++)
			seen = strcmp(ibc_csv_str(t, q, "suite"), suite) == 0 &&
			       strcmp(ibc_csv_str(t, q, "variant"), variant) == 0 &&
			       strcmp(ibc_csv_str(t, q, "xport"), xport) == 0 &&
			       strcmp(ibc_csv_str(t, q, "bytes"), bc) == 0 &&
			       strcmp(ibc_csv_str(t, q, "fanin"), fanc) == 0 &&
			       strcmp(ibc_csv_str(t, q, "impl"), "ibchar") == 0;
		if (seen)
			continue;
		for (e = 0; e < NEXTRA && rc == IBC_OK; e++) {
			struct pred p;

			if (predict(pr, fam, variant, xport, extra_n[e], *fanc ? (long)num(fanc) : 0,
				    (size_t)num(bc), &p) != IBC_OK)
				continue;
			for (i = 0; i < NEXTRACOLS; i++)
				fp[i] = f[i];
			notes_fmt(p.notes, 0, note, sizeof(note));
			fp[0] = suite;
			fp[1] = variant;
			fp[2] = xport;
			snprintf(f[3], 64, "%d", extra_n[e]);
			fp[4] = bc;
			fp[5] = fanc;
			fmtd(f[6], 64, p.lop);
			fmtd(f[7], 64, p.lrtt);
			fmtd(f[8], 64, p.loggp);
			snprintf(f[9], 64, "%d", p.rounds);
			fp[10] = "model-eval";
			fp[11] = note;
			rc = ibc_csv_writer_row(w, fp);
			if (used < sizeof(line))
				used += (size_t)snprintf(line + used, sizeof(line) - used, " %6s|%6s|%-6s",
							 f[6], f[7], f[8]);
		}
		if (o->out != NULL && used > 0)
			fprintf(o->out, "%-9s %-11s %-5s %8s %5s%s\n", suite, variant, xport, bc, fanc, line);
	}
	return rc;
}

/* RGM's fan-in: each model's best l per N (positive predictions only)
 * against the measured sweep's */
static int fanin_choice(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
			const struct ibc_logp_params *pr, struct ibc_csv_writer *w)
{
	const struct ibc_logp_family *fam = fam_of(o, "barrier");
	int ns[64], nn = 0, i, m, rc = IBC_OK;
	char xport[16] = "";
	size_t r;

	if (fam == NULL)
		return IBC_OK;
	for (r = 0; r + 1 < t->nrows; r++) {
		int n = ibc_csv_int(t, r, "ranks"), k;

		if (strcmp(ibc_csv_str(t, r, "suite"), "barrier") != 0 ||
		    strcmp(ibc_csv_str(t, r, "variant"), "rgm") != 0)
			continue;
		snprintf(xport, sizeof(xport), "%s", ibc_csv_str(t, r, "xport"));
		for (k = 0; k < nn && ns[k] != n; k++)
			;
		if (k == nn && nn < 60)
			ns[nn++] = n;
	}
	if (nn == 0)
		return IBC_OK;
	for (i = 0; i < (int)NEXTRA; i++)
		ns[nn++] = extra_n[i];
	if (o->out != NULL)
		fprintf(o->out, "\nRGM fan-in l (2^k - 1, up to the flat tree; a model's best "
			"among its positive predictions) against the measured sweep (%s):\n"
			"%7s %8s %9s %8s %9s %8s %9s %8s %9s\n", xport, "N", "LoP l", "us",
			"LoP-RTT l", "us", "LogGP l", "us", "meas. l", "us");
	for (i = 0; i < nn && rc == IBC_OK; i++) {
		double best[4] = { INFINITY, INFINITY, INFINITY, INFINITY };
		long bl[4] = { 0, 0, 0, 0 }, l;
		char f[NFANIN][32];
		const char *fp[NFANIN];
		size_t k;

		/* the barrier suite's sweep: up to the first l >= N - 1 (flat) */
		for (l = 1; ibc_pattern_fanin_distinct(l, ns[i]); l = 2 * l + 1) {
			struct pred p;
			double v[3];

			if (predict(pr, fam, "rgm", xport, ns[i], l, 0, &p) != IBC_OK)
				continue;
			v[0] = p.lop;
			v[1] = p.lrtt;
			v[2] = p.loggp;
			for (m = 0; m < 3; m++)
				if (isfinite(v[m]) && v[m] > 0 && v[m] < best[m]) {
					best[m] = v[m];
					bl[m] = l;
				}
		}
		for (r = 0; r + 1 < t->nrows; r++) {
			const char *as;
			double v = measured(t, r, &as);

			if (strcmp(ibc_csv_str(t, r, "suite"), "barrier") == 0 &&
			    strcmp(ibc_csv_str(t, r, "variant"), "rgm") == 0 &&
			    strcmp(ibc_csv_str(t, r, "impl"), "ibchar") == 0 &&
			    strcmp(ibc_csv_str(t, r, "xport"), xport) == 0 &&
			    ibc_csv_int(t, r, "ranks") == ns[i] && v < best[3]) {
				best[3] = v;
				bl[3] = (long)ibc_csv_num(t, r, "fanin");
			}
		}
		for (k = 0; k < NFANIN; k++) {
			f[k][0] = '\0';
			fp[k] = f[k];
		}
		fp[0] = xport;
		snprintf(f[1], 32, "%d", ns[i]);
		for (m = 0; m < 4; m++) {
			if (bl[m])
				snprintf(f[2 + 2 * m], 32, "%ld", bl[m]);
			fmtd(f[3 + 2 * m], 32, best[m]);
		}
		rc = ibc_csv_writer_row(w, fp);
		if (o->out != NULL)
			fprintf(o->out, "%7d %8s %9s %8s %9s %8s %9s %8s %9s\n", ns[i], f[2], f[3], f[4],
				f[5], f[6], f[7], f[8], f[9]);
	}
	return rc;
}

static int writer(const char *dir, const char *name, const char *const *cols, size_t n,
		  struct ibc_csv_writer **w)
{
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = ibc_csv_writer_open(path, cols, n, 0, w);
	if (rc != IBC_OK)
		ibc_error("logp model: writing %s: %s", path, ibc_status_str(rc));
	return rc;
}

int ibc_logp_model_run(const struct ibc_logp_model_opts *o)
{
	static struct ibc_logp_params pr;
	static struct alg_err a[MAX_ALGS];
	struct ibc_csv_writer *w[3] = { NULL, NULL, NULL };
	struct ibc_csv_table *t = NULL;
	const char *fd = o->fits_dir != NULL ? o->fits_dir : o->dir;
	char path[4200];
	size_t na = 0, npred = 0, i;
	int rc, k;

	na = 0;
	rc = ibc_logp_params_load(fd, &pr);
	if (rc != IBC_OK)
		return rc;
	snprintf(path, sizeof(path), "%s/results.csv", o->dir);
	rc = ibc_csv_read(path, &t);
	if (rc != IBC_OK) {
		ibc_error("logp model: reading %s: %s", path, ibc_status_str(rc));
		ibc_logp_params_free(&pr);
		return rc;
	}
	if (o->out != NULL)
		fprintf(o->out, "LoP closed loop: the fits of run %s (%s) predict the rows of %s "
			"(measured: the back-to-back mean paper_us, else p50_us; err = predicted / "
			"measured - 1)\n", pr.run_id, fd, path);
	rc = writer(o->dir, "lop-model.csv", model_cols, NMODEL, &w[0]);
	if (rc == IBC_OK)
		rc = rows_predict(o, t, &pr, w[0], a, &na, &npred);
	if (rc == IBC_OK && npred == 0) {
		ibc_error("logp model: %s has no rows the model predicts (barrier or all-to-all "
			  "algorithms of ibchar)", path);
		rc = IBC_ERR_NOTFOUND;
	}
	if (rc == IBC_OK && o->out != NULL) {
		fprintf(o->out, "\nper algorithm, mean |err| over its rows:\n%-9s %-11s %8s %8s %8s  %s\n",
			"suite", "variant", "LoP", "LoP-RTT", "LogGP", "closest");
		for (i = 0; i < na; i++) {
			double e[3] = { a[i].nl ? a[i].lop / a[i].nl : NAN,
					a[i].nr ? a[i].lrtt / a[i].nr : NAN,
					a[i].ng ? a[i].loggp / a[i].ng : NAN };
			static const char *const names[] = { "LoP", "LoP-RTT", "LogGP" };
			int m, best = -1;

			for (m = 0; m < 3; m++)
				if (isfinite(e[m]) && (best < 0 || e[m] < e[best]))
					best = m;
			fprintf(o->out, "%-9s %-11s %7.1f%% %7.1f%% %7.1f%%  %s\n", a[i].suite,
				a[i].variant, 100 * e[0], 100 * e[1], 100 * e[2],
				best < 0 ? "-" : names[best]);
		}
	}
	if (rc == IBC_OK)
		rc = writer(o->dir, "lop-extrapolation.csv", extra_cols, NEXTRACOLS, &w[1]);
	if (rc == IBC_OK)
		rc = extrapolate(o, t, &pr, w[1]);
	if (rc == IBC_OK)
		rc = writer(o->dir, "lop-fanin.csv", fanin_cols, NFANIN, &w[2]);
	if (rc == IBC_OK)
		rc = fanin_choice(o, t, &pr, w[2]);
	for (k = 0; k < 3; k++)
		if (w[k] != NULL && ibc_csv_writer_close(w[k]) != IBC_OK && rc == IBC_OK)
			rc = IBC_ERR_IO;
	if (rc == IBC_OK && o->out != NULL)
		fprintf(o->out, "\nwritten: %s/lop-model.csv, lop-extrapolation.csv, lop-fanin.csv\n",
			o->dir);
	ibc_csv_table_free(t);
	ibc_logp_params_free(&pr);
	return rc;
}
