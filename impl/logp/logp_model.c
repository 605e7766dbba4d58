/* The LoP closed loop (logp_model.h). */
#include "logp/logp_model.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"
#include "logp/logp_cost.h"
#include "logp/logp_fits.h"
#include "logp/logp_place.h"
#include "pattern/pattern.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALGS 64
static const int extra_n[] = { 1024, 4096, 16384, 65536 };
#define NEXTRA (sizeof(extra_n) / sizeof(extra_n[0]))

static const char *const mod_names[NMOD] = { "LoP", "LoP-RTT", "LogGP" };
#define NOT_MODELLED "not modelled (oversubscribed)"

static double num(const char *c)
{
	return c != NULL && *c ? strtod(c, NULL) : NAN;
}

/* the eager limit of a row's two-sided messages (extra eager_max), else
 * none: every message eager */
static size_t row_eager(const struct ibc_csv_table *t, size_t r)
{
	double v = ibc_csv_extra_num(ibc_csv_str(t, r, "extra"), "eager_max");

	return isfinite(v) && v >= 0 ? (size_t)v : SIZE_MAX;
}

/* What a row's prediction is compared with: its back-to-back loop (Kini
 * et al.'s method for the barrier; Sur et al. put an MPI_Barrier before
 * every all-to-all), by the loop's median (b2b_p50_us), as the kernels'
 * round trips are (their loops' b2b_p50_us, their calls' p50), or with
 * mean by its mean (paper_us, the paper's figure, which one preemption in
 * the loop can double); else the other of the two, else p50_us; *as names
 * which. */
static double measured(const struct ibc_csv_table *t, size_t r, int mean, const char **as)
{
	static const char *const keys[2][2] = { { "b2b_p50_us", "paper_us" },
						 { "paper_us", "b2b_p50_us" } };
	double v = ibc_csv_extra_first(ibc_csv_str(t, r, "extra"), keys[mean != 0], 2, as);

	if (*as != NULL)
		return v;
	*as = "p50_us";
	return ibc_csv_num(t, r, "p50_us");
}

static void fmtd(char *b, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(b, cap, "%.4g", v);
	else
		b[0] = '\0';
}

/* a model's status cell: "ok", "no prediction: why", or not modelled (nm:
 * why) */
static void status_fmt(const struct pred *p, int mod, const char *nm, char *b, size_t cap)
{
	if (nm != NULL)
		snprintf(b, cap, "%s", nm);
	else if (p->why[mod] != NULL)
		snprintf(b, cap, "no prediction: %s", p->why[mod]);
	else
		snprintf(b, cap, "ok");
}

/* ------------------------------------------------------- the tables ---- */

struct alg_err {
	char suite[16], variant[40];
	double sum[NMOD];   /* sums of |err| */
	int cnt[NMOD];
	int wins[NMOD];     /* rows where the model was closest */
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
					  "rounds", "note", "lop_status", "lop_rtt_status",
					  "loggp_status", "best", "best_err", "copy_us",
					  "user_write_us" };
#define NMODEL (sizeof(model_cols) / sizeof(model_cols[0]))
static const char *const extra_cols[] = { "suite", "variant", "xport", "ranks", "bytes", "fanin",
					  "lop_us", "lop_rtt_us", "loggp_us", "rounds", "method", "note",
					  "lop_status", "lop_rtt_status", "loggp_status" };
#define NEXTRACOLS (sizeof(extra_cols) / sizeof(extra_cols[0]))
static const char *const fanin_cols[] = { "xport", "ranks", "bytes", "lop_best_fanin", "lop_us",
					  "lop_rtt_best_fanin", "lop_rtt_us", "loggp_best_fanin",
					  "loggp_us", "measured_best_fanin", "measured_us", "model",
					  "model_fanin", "measured_at_model_fanin_us",
					  "model_over_best", "status" };
#define NFANIN (sizeof(fanin_cols) / sizeof(fanin_cols[0]))

/* Whether row r is not modelled: more ranks on a node than PUs (--pus N:
 * N PUs per node; else what the harness recorded when it measured the row,
 * its oversub column).  *meas_over: the row was measured oversubscribed. */
static int row_oversub(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t, size_t r,
		       int *meas_over)
{
	double n = ibc_csv_num(t, r, "ranks"), nodes = ibc_csv_num(t, r, "nodes");

	*meas_over = strcmp(ibc_csv_str(t, r, "oversub"), "1") == 0;
	if (!(nodes >= 1))
		nodes = 1;
	if (o->pus > 0)
		return ceil(n / nodes) > o->pus;
	return *meas_over;
}

/* the model whose prediction v[m] is closest to meas (its error into
 * err[m] for every m, NAN where there is none), or -1 */
static int closest(const double *v, double meas, double *err)
{
	int m, best = -1;

	for (m = 0; m < NMOD; m++) {
		err[m] = v[m] / meas - 1;
		if (isfinite(err[m]) && (best < 0 || fabs(err[m]) < fabs(err[best])))
			best = m;
	}
	return best;
}

/* the measured rows, predicted; per algorithm errors into a; score: rows
 * within +-20% by the closest model, rows scored, rows that could be
 * scored but no model predicts, then the first two against the loop's
 * other statistic (its mean where the rows are scored by its median, and
 * the other way round).  A row oversubscribed, or measured at another
 * placement than the kernels (pl), is not modelled. */
static int rows_predict(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
			const struct ibc_logp_params *pr, const struct ibc_logp_place *pl,
			struct ibc_csv_writer *w, struct alg_err *a, size_t *na, size_t *npred,
			int *score)
{
	size_t r;
	int rc = IBC_OK;

	if (o->out != NULL)
		fprintf(o->out, "%-9s %-11s %-5s %5s %8s %5s %10s %10s %7s %10s %7s %10s %7s %-7s %8s %8s  %s\n",
			"suite", "variant", "xport", "N", "bytes", "fanin", "meas_us", "LoP_us", "err",
			"LoPrtt_us", "err", "LogGP_us", "err", "best", "copy_us", "user_us", "note");
	for (r = 0; r + 1 < t->nrows && rc == IBC_OK; r++) {
		const char *suite = ibc_csv_str(t, r, "suite"), *variant = ibc_csv_str(t, r, "variant");
		const char *xport = ibc_csv_str(t, r, "xport");
		const struct ibc_logp_family *fam = fam_of(o, suite);
		int n = ibc_csv_int(t, r, "ranks"), meas_over, m, best;
		double fan = ibc_csv_num(t, r, "fanin"), p50 = ibc_csv_num(t, r, "p50_us"), err[NMOD];
		const char *as;
		double meas = measured(t, r, o->meas_mean, &as);
		size_t bytes = ibc_csv_size(t, r, "bytes");
		char f[NMODEL][160], note[160], cellv[NMOD][16], nmb[160];
		const char *fp[NMODEL], *nm;
		struct pred p;
		struct alg_err *ae;
		size_t i;

		if (fam == NULL || strcmp(ibc_csv_str(t, r, "impl"), "ibchar") != 0 || !isfinite(meas) ||
		    meas <= 0 || n < 1)
			continue;
		nm = row_oversub(o, t, r, &meas_over)
			     ? NOT_MODELLED
			     : ibc_logp_place_check(pl, suite, xport, n, ibc_csv_num(t, r, "probe_us"),
						    nmb, sizeof(nmb));
		memset(&p, 0, sizeof(p));
		if (nm == NULL && ibc_logp_predict(pr, fam, variant, xport, n, isfinite(fan) ? (long)fan : 0, bytes,
					row_eager(t, r), &p) != IBC_OK)
			continue;
		for (m = 0; nm != NULL && m < NMOD; m++)
			p.v[m] = NAN;
		/* a measurement taken oversubscribed is no test of a prediction */
		best = closest(p.v, meas_over ? NAN : meas, err);
		ibc_logp_notes_fmt(p.notes, meas_over, note, sizeof(note));
		for (i = 0; i < NMODEL; i++) {
			f[i][0] = '\0';
			fp[i] = f[i];
		}
		fp[0] = suite;
		fp[1] = variant;
		fp[2] = xport;
		snprintf(f[3], sizeof(f[3]), "%d", n);
		snprintf(f[4], sizeof(f[4]), "%zu", bytes);
		fp[5] = ibc_csv_str(t, r, "fanin");
		snprintf(f[6], sizeof(f[6]), "%d", meas_over);
		fmtd(f[7], sizeof(f[7]), meas);
		fp[8] = as;
		fmtd(f[9], sizeof(f[9]), p50);
		for (m = 0; m < NMOD; m++) {
			fmtd(f[10 + 2 * m], sizeof(f[0]), p.v[m]);
			fmtd(f[11 + 2 * m], sizeof(f[0]), err[m]);
			status_fmt(&p, m, nm, f[18 + m], sizeof(f[0]));
			snprintf(cellv[m], sizeof(cellv[m]), "%s",
				 nm != NULL ? "n/m" : f[10 + 2 * m][0] ? f[10 + 2 * m] : "no pred.");
		}
		snprintf(f[16], sizeof(f[16]), "%d", p.rounds);
		fp[17] = note;
		if (best >= 0) {
			fp[21] = mod_names[best];
			fmtd(f[22], sizeof(f[22]), err[best]);
		}
		if (nm == NULL) {
			fmtd(f[23], sizeof(f[23]), p.copy_us);
			fmtd(f[24], sizeof(f[24]), p.user_us);
		}
		rc = ibc_csv_writer_row(w, fp);
		(*npred)++;
		ae = nm != NULL || meas_over ? NULL : alg_get(a, na, suite, variant);
		for (m = 0; ae != NULL && m < NMOD; m++)
			if (isfinite(err[m])) {
				ae->sum[m] += fabs(err[m]);
				ae->cnt[m]++;
			}
		if (ae != NULL && best >= 0) {
			const char *alt_as;
			double alt = measured(t, r, !o->meas_mean, &alt_as), alt_err[NMOD];
			int ab = strcmp(alt_as, as) != 0 ? closest(p.v, alt, alt_err) : -1;

			ae->wins[best]++;
			score[1]++;
			score[0] += fabs(err[best]) <= 0.2;
			score[4] += ab >= 0;
			score[3] += ab >= 0 && fabs(alt_err[ab]) <= 0.2;
		}
		score[2] += ae != NULL && best < 0;
		if (o->out == NULL)
			continue;
		fprintf(o->out, "%-9s %-11s %-5s %5d %8zu %5s %10.3f %10s %7s %10s %7s %10s %7s %-7s %8s %8s  %s\n",
			suite, variant, xport, n, bytes, fp[5], meas, cellv[0], f[11], cellv[1], f[13],
			cellv[2], f[15], best >= 0 ? mod_names[best] : "-", f[23][0] ? f[23] : "-",
			f[24][0] ? f[24] : "-", note);
		if (nm != NULL)
			fprintf(o->out, "%42s %s\n", "", nm);
		for (m = 0; nm == NULL && m < NMOD; m++)
			if (p.why[m] != NULL)
				fprintf(o->out, "%42s %s: no prediction (%s)\n", "", mod_names[m], p.why[m]);
	}
	return rc;
}

/* the measured (suite, variant, xport, bytes, fanin) at N = 1 K .. 64 K */
static int extrapolate(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
		       const struct ibc_logp_params *pr, struct ibc_csv_writer *w)
{
	size_t r, q, e;
	int rc = IBC_OK, m;

	if (o->out != NULL)
		fprintf(o->out, "\nextrapolation (the fitted model evaluated over the pattern's rounds; "
			"no contention modelled; '-': no prediction, the reason below):\n%-9s %-11s %-5s "
			"%8s %5s %20s %20s %20s %20s  (LoP | LoP-RTT | LogGP, us)\n", "suite", "variant",
			"xport", "bytes", "fanin", "N=1K", "4K", "16K", "64K");
	for (r = 0; r + 1 < t->nrows && rc == IBC_OK; r++) {
		const char *suite = ibc_csv_str(t, r, "suite"), *variant = ibc_csv_str(t, r, "variant");
		const char *xport = ibc_csv_str(t, r, "xport"), *fanc = ibc_csv_str(t, r, "fanin");
		const char *bc = ibc_csv_str(t, r, "bytes");
		const struct ibc_logp_family *fam = fam_of(o, suite);
		char line[512], f[NEXTRACOLS][160], note[128], why[3][160];
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
		why[0][0] = why[1][0] = why[2][0] = '\0';
		for (e = 0; e < NEXTRA && rc == IBC_OK; e++) {
			struct pred p;

			if (ibc_logp_predict(pr, fam, variant, xport, extra_n[e], *fanc ? (long)num(fanc) : 0,
				    (size_t)num(bc), row_eager(t, r), &p) != IBC_OK)
				continue;
			for (i = 0; i < NEXTRACOLS; i++) {
				f[i][0] = '\0';
				fp[i] = f[i];
			}
			ibc_logp_notes_fmt(p.notes, 0, note, sizeof(note));
			fp[0] = suite;
			fp[1] = variant;
			fp[2] = xport;
			snprintf(f[3], sizeof(f[3]), "%d", extra_n[e]);
			fp[4] = bc;
			fp[5] = fanc;
			for (m = 0; m < NMOD; m++) {
				fmtd(f[6 + m], sizeof(f[0]), p.v[m]);
				status_fmt(&p, m, 0, f[12 + m], sizeof(f[0]));
				if (p.why[m] != NULL && why[m][0] == '\0')
					snprintf(why[m], sizeof(why[m]), "%s from N=%d: no prediction (%s)",
						 mod_names[m], extra_n[e], p.why[m]);
			}
			snprintf(f[9], sizeof(f[9]), "%d", p.rounds);
			fp[10] = "model-eval";
			fp[11] = note;
			rc = ibc_csv_writer_row(w, fp);
			if (used < sizeof(line))
				used += (size_t)snprintf(line + used, sizeof(line) - used, " %6s|%6s|%-6s",
							 f[6][0] ? f[6] : "-", f[7][0] ? f[7] : "-",
							 f[8][0] ? f[8] : "-");
		}
		if (o->out == NULL || used == 0)
			continue;
		fprintf(o->out, "%-9s %-11s %-5s %8s %5s%s\n", suite, variant, xport, bc, fanc, line);
		for (m = 0; m < NMOD; m++)
			if (why[m][0])
				fprintf(o->out, "%42s %s\n", "", why[m]);
	}
	return rc;
}

/* RGM's fan-in on n ranks: each model's best l (its predictions, guarded)
 * and the one the chooser model picks, against the measured sweep */
static int fanin_one(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
		     const struct ibc_logp_params *pr, const struct ibc_logp_family *fam,
		     const char *xport, int n, const char *bytes, int chooser, struct ibc_csv_writer *w)
{
	double best[NMOD + 1] = { INFINITY, INFINITY, INFINITY, INFINITY }, at_model = NAN;
	long bl[NMOD + 1] = { 0, 0, 0, 0 }, l;
	const char *why[NMOD] = { "no fan-in predicted", "no fan-in predicted", "no fan-in predicted" };
	char f[NFANIN][160];
	const char *fp[NFANIN];
	int m, oversub = 0, rows = 0, meas_over, any_meas_over = 0;
	size_t r, k;

	/* the measured sweep: the best l, and whether N was oversubscribed */
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *as;
		double v = measured(t, r, o->meas_mean, &as);

		if (strcmp(ibc_csv_str(t, r, "suite"), "barrier") != 0 ||
		    strcmp(ibc_csv_str(t, r, "variant"), "rgm") != 0 ||
		    strcmp(ibc_csv_str(t, r, "impl"), "ibchar") != 0 ||
		    strcmp(ibc_csv_str(t, r, "xport"), xport) != 0 || (int)ibc_csv_num(t, r, "ranks") != n ||
		    strcmp(ibc_csv_str(t, r, "bytes"), bytes) != 0)
			continue;
		rows++;
		oversub |= row_oversub(o, t, r, &meas_over);
		any_meas_over |= meas_over;
		if (v < best[NMOD]) {
			best[NMOD] = v;
			bl[NMOD] = (long)ibc_csv_num(t, r, "fanin");
		}
	}
	/* the barrier suite's sweep: up to the first l >= N - 1 (flat) */
	for (l = 1; !oversub && ibc_pattern_fanin_distinct(l, n); l = 2 * l + 1) {
		struct pred p;

		if (ibc_logp_predict(pr, fam, "rgm", xport, n, l, (size_t)num(bytes), SIZE_MAX, &p) != IBC_OK)
			continue;
		for (m = 0; m < NMOD; m++) {
			if (p.why[m] != NULL && bl[m] == 0)
				why[m] = p.why[m];
			if (isfinite(p.v[m]) && p.v[m] < best[m]) {
				best[m] = p.v[m];
				bl[m] = l;
				why[m] = NULL;
			}
		}
	}
	for (k = 0; k < NFANIN; k++) {
		f[k][0] = '\0';
		fp[k] = f[k];
	}
	fp[0] = xport;
	snprintf(f[1], 160, "%d", n);
	fp[2] = bytes;
	for (m = 0; m <= NMOD; m++) {
		if (bl[m])
			snprintf(f[3 + 2 * m], 160, "%ld", bl[m]);
		fmtd(f[4 + 2 * m], 160, best[m]);
	}
	fp[11] = mod_names[chooser];
	if (bl[chooser])
		snprintf(f[12], 160, "%ld", bl[chooser]);
	for (r = 0; bl[chooser] && r + 1 < t->nrows; r++) {
		const char *as;

		if (strcmp(ibc_csv_str(t, r, "suite"), "barrier") == 0 &&
		    strcmp(ibc_csv_str(t, r, "variant"), "rgm") == 0 &&
		    strcmp(ibc_csv_str(t, r, "impl"), "ibchar") == 0 &&
		    strcmp(ibc_csv_str(t, r, "xport"), xport) == 0 &&
		    (int)ibc_csv_num(t, r, "ranks") == n && strcmp(ibc_csv_str(t, r, "bytes"), bytes) == 0 &&
		    (long)ibc_csv_num(t, r, "fanin") == bl[chooser])
			at_model = measured(t, r, o->meas_mean, &as);
	}
	if (any_meas_over) /* no test of the choice */
		at_model = NAN;
	fmtd(f[13], 160, at_model);
	if (isfinite(at_model) && isfinite(best[NMOD]) && best[NMOD] > 0)
		snprintf(f[14], 160, "%.3f", at_model / best[NMOD]);
	if (oversub)
		snprintf(f[15], 160, "%s", NOT_MODELLED);
	else if (!bl[chooser])
		snprintf(f[15], 160, "no prediction: %s", why[chooser]);
	else if (!rows)
		snprintf(f[15], 160, "ok (not measured)");
	else if (any_meas_over)
		snprintf(f[15], 160, "ok (measured oversubscribed: no ratio)");
	else if (!isfinite(at_model))
		snprintf(f[15], 160, "ok (the model's fan-in not measured)");
	else
		snprintf(f[15], 160, "ok");
	if (o->out != NULL)
		fprintf(o->out, "%7d %6s %8s %9s %8s %9s %8s %9s %8s %9s %8s %9s %7s  %s\n", n, bytes,
			f[3][0] ? f[3] : "-", f[4], f[5][0] ? f[5] : "-", f[6], f[7][0] ? f[7] : "-", f[8],
			f[9][0] ? f[9] : "-", f[10], f[12][0] ? f[12] : "-", f[13], f[14][0] ? f[14] : "-",
			f[15]);
	return ibc_csv_writer_row(w, fp);
}

/* RGM's fan-in per N: measured N's and 1 K .. 64 K; the chooser is the
 * model with the smallest mean |err| over the barrier rows (LoP when none) */
static int fanin_choice(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
			const struct ibc_logp_params *pr, struct ibc_csv_writer *w,
			const struct alg_err *a, size_t na)
{
	const struct ibc_logp_family *fam = fam_of(o, "barrier");
	double sum[NMOD] = { 0, 0, 0 };
	int cnt[NMOD] = { 0, 0, 0 }, ns[64], nn = 0, i, m, chooser = M_LOP, rc = IBC_OK;
	char xport[16] = "", bs[64][24];
	size_t r;

	if (fam == NULL)
		return IBC_OK;
	for (r = 0; r < na; r++)
		for (m = 0; m < NMOD && strcmp(a[r].suite, "barrier") == 0; m++) {
			sum[m] += a[r].sum[m];
			cnt[m] += a[r].cnt[m];
		}
	for (m = 0; m < NMOD; m++)
		if (cnt[m] > 0 && (cnt[chooser] == 0 || sum[m] / cnt[m] < sum[chooser] / cnt[chooser]))
			chooser = m;
	for (r = 0; r + 1 < t->nrows; r++) {
		int n = ibc_csv_int(t, r, "ranks"), k;

		if (strcmp(ibc_csv_str(t, r, "suite"), "barrier") != 0 ||
		    strcmp(ibc_csv_str(t, r, "variant"), "rgm") != 0)
			continue;
		snprintf(xport, sizeof(xport), "%s", ibc_csv_str(t, r, "xport"));
		for (k = 0; k < nn && (ns[k] != n || strcmp(bs[k], ibc_csv_str(t, r, "bytes")) != 0); k++)
			;
		if (k == nn && nn < 60) {
			snprintf(bs[nn], sizeof(bs[nn]), "%s", ibc_csv_str(t, r, "bytes"));
			ns[nn++] = n;
		}
	}
	if (nn == 0)
		return IBC_OK;
	for (i = 0; i < (int)NEXTRA; i++) {
		memcpy(bs[nn], bs[0], sizeof(bs[nn])); /* nn >= 1 here */
		ns[nn++] = extra_n[i];
	}
	if (o->out != NULL)
		fprintf(o->out, "\nRGM fan-in l (2^k - 1, up to the flat tree; each model's best among "
			"its predictions), chosen by %s (the smallest mean |err| on the barrier rows), "
			"against the measured sweep (%s); ratio = measured at the model's l / measured "
			"best:\n%7s %6s %8s %9s %8s %9s %8s %9s %8s %9s %8s %9s %7s  %s\n",
			mod_names[chooser], xport, "N", "bytes", "LoP l", "us", "LoP-RTT l", "us", "LogGP l", "us",
			"meas. l", "us", "model l", "meas.us", "ratio", "status");
	for (i = 0; i < nn && rc == IBC_OK; i++)
		rc = fanin_one(o, t, pr, fam, xport, ns[i], bs[i], chooser, w);
	return rc;
}

static int has_kernel(const struct ibc_logp_params *pr, const char *kv)
{
	size_t i;

	for (i = 0; i < pr->npts && strcmp(pr->pts[i].variant, kv) != 0; i++)
		;
	return i < pr->npts;
}

/* What the model costs a term by, or that the run lacks its kernels (a run
 * before them), said on out. */
static void terms_say(FILE *out, const struct ibc_logp_params *pr)
{
	/* k1 (and k2) present: present; else absent, and with fb (a kernel
	 * measured instead) absent at all when fb is not there either */
	static const struct {
		const char *name, *k1, *k2, *fb, *present, *absent, *rows, *note, *tail;
	} t[] = {
		{ "send rounds", "rtt-pool-1n", NULL, NULL,
		  "costed by rtt-pool-1n, the two-sided path of the collectives (the receive pool), "
		  "in LoP and LoP-RTT",
		  "costed by rtt-send-1n, the bare transport", "rtt-pool-1n", "; note send~raw", "" },
		{ "multicast release", MC_KERNEL, NULL, NULL,
		  "costed by " MC_KERNEL " (a datagram out, a write back) less half of " MC_BACK
		  " at p = 1: the datagram's one way, in LoP and LoP-RTT",
		  "costed as a send round trip, rtt-send-1n at p = 1", MC_KERNEL, "; note mcast~send",
		  "" },
		{ "exchange rounds of writes", XCHG_WRITE, NULL, NULL,
		  "costed in LoP-RTT by " XCHG_WRITE " (a pair writing each other at once: RPE's "
		  "and RDS's rounds of signals); LoP as printed keeps half of rtt-write-1n's round "
		  "trip",
		  "costed in LoP-RTT as half of rtt-write-1n's round trip", XCHG_WRITE,
		  "; note xchg~half", "" },
		{ "exchange rounds of sends", XCHG_POOL, NULL, NULL,
		  "costed in LoP-RTT by " XCHG_POOL " (a pair sending each other at once through "
		  "the receive pool: PE's and DS's rounds); LoP as printed keeps half of the send "
		  "round trip",
		  "costed in LoP-RTT as half of the send round trip", XCHG_POOL, "; note xchg~half",
		  "" },
		{ "exchange rounds of blocks", XCHG_BLOCKS, CP_FLAG, NULL,
		  "costed in LoP-RTT by " XCHG_BLOCKS " less " CP_FLAG " (a pair writing each "
		  "other a block and its flag at once, each copying the block it received out: "
		  "HRWG's steps; the copy term adds the copy); LoP as printed keeps the round trip "
		  "below",
		  "costed by the round trips below", XCHG_BLOCKS " or " CP_FLAG, "; note xblk~rtt",
		  "" },
		{ "block writes", "rtt-write-readout-1n", NULL, NULL,
		  "costed by rtt-write-readout-1n (each block copied out before the next round trip, "
		  "as the all-to-all's are), in LoP and LoP-RTT",
		  "costed by rtt-write-1n, whose reader reads only the flag", "rtt-write-readout-1n",
		  "; note write~unread", "" },
		{ "tail flags", "rtt-write-readout-flag-1n", NULL, NULL,
		  "costed by rtt-write-readout-flag-1n where a round's flag is a write of its own on "
		  "a line of its own (HRWG's), in LoP and LoP-RTT",
		  "costed as the block writes above", "rtt-write-readout-flag-1n", "; note flag~inblock",
		  "" },
		{ "copy term", "copy", "copy-peer", NULL,
		  "each algorithm's local copies per call (copy_us), costed by the logp kernels copy "
		  "and copy-peer, added to every model",
		  "absent", "copy or copy-peer", "", "; an algorithm that copies gets no prediction" },
		{ "blocks out after a tail flag", CP_FLAG, NULL, NULL,
		  "costed by copy-peer-flag where a round's flag has a line of its own (HRWG's: the "
		  "copy is the first touch of the blocks' lines)",
		  "costed by copy-peer, whose flag is the block's last word", CP_FLAG,
		  "; note peer~inblock", "" },
		{ "user-write term", "os-write-user-all", NULL, "os-write-user",
		  "each write into a peer's user memory (user_us), costed by the logp kernel "
		  "os-write-user-all (every rank writing at once), added to every model",
		  "costed by os-write-user (rank 0 writing alone)", "os-write-user-all",
		  "; note user~one", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (has_kernel(pr, t[i].k1) && (t[i].k2 == NULL || has_kernel(pr, t[i].k2)))
			fprintf(out, "%s: %s\n", t[i].name, t[i].present);
		else if (t[i].fb != NULL && !has_kernel(pr, t[i].fb))
			fprintf(out, "%s: absent (%s: no %s or %s rows); an algorithm that needs it gets "
				     "no prediction\n", t[i].name, pr->run_id, t[i].k1, t[i].fb);
		else
			fprintf(out, "%s: %s (%s: no %s rows%s)%s\n", t[i].name, t[i].absent,
				pr->run_id, t[i].rows, t[i].note, t[i].tail);
	}
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
	static struct ibc_logp_place pl;
	struct ibc_csv_writer *w[3] = { NULL, NULL, NULL };
	struct ibc_csv_table *t = NULL;
	const char *fd = o->fits_dir != NULL ? o->fits_dir : o->dir;
	char path[4200];
	size_t na = 0, npred = 0, i;
	int rc, k, m, score[5] = { 0, 0, 0, 0, 0 };

	rc = ibc_logp_params_load(fd, &pr);
	if (rc != IBC_OK)
		return rc;
	pr.rtt_b2b = o->b2b;
	snprintf(path, sizeof(path), "%s/results.csv", o->dir);
	rc = ibc_csv_read(path, &t);
	if (rc != IBC_OK) {
		ibc_error("logp model: reading %s: %s", path, ibc_status_str(rc));
		ibc_logp_params_free(&pr);
		return rc;
	}
	/* --any-placement: nothing known of the placements, every row modelled */
	if (o->any_placement)
		memset(&pl, 0, sizeof(pl));
	else
		ibc_logp_place_load(&pl, t, o->dir, fd);
	if (o->out != NULL) {
		fprintf(o->out, "LoP closed loop: the fits of run %s (%s) predict the rows of %s "
			"(measured: the back-to-back loop's %s, else %s, else p50_us; err = "
			"predicted / measured - 1; LoP is the paper's composition as printed; rows with "
			"more ranks than PUs are %s", pr.run_id, fd, path,
			o->meas_mean ? "mean paper_us (--measured mean)" : "median b2b_p50_us",
			o->meas_mean ? "its median" : "its mean", NOT_MODELLED);
		if (o->pus > 0)
			fprintf(o->out, " (--pus %d per node)", o->pus);
		fprintf(o->out, ")\n");
		terms_say(o->out, &pr);
		fprintf(o->out, "round trips: %s\n",
			o->b2b ? "the kernels' back-to-back loops (b2b_p50_us) where measured, else "
				 "their p50 (--rtt b2b)"
			       : "the kernels' p50, one call at a time (--rtt p50)");
		if (o->any_placement)
			fprintf(o->out, "placement: not checked (--any-placement)\n");
		else
			ibc_logp_place_say(&pl, o->out);
	}
	rc = writer(o->dir, "lop-model.csv", model_cols, NMODEL, &w[0]);
	if (rc == IBC_OK)
		rc = rows_predict(o, t, &pr, &pl, w[0], a, &na, &npred, score);
	if (rc == IBC_OK && npred == 0) {
		ibc_error("logp model: %s has no rows the model predicts (barrier or all-to-all "
			  "algorithms of ibchar)", path);
		rc = IBC_ERR_NOTFOUND;
	}
	if (rc == IBC_OK && o->out != NULL) {
		fprintf(o->out, "\nper algorithm (rows modelled), mean |err| over its rows "
			"and the rows each model was closest on:\n%-9s %-11s %8s %8s %8s  %-8s %s\n",
			"suite", "variant", "LoP", "LoP-RTT", "LogGP", "closest", "wins (LoP/RTT/LogGP)");
		for (i = 0; i < na; i++) {
			double e[NMOD];
			int best = -1;

			for (m = 0; m < NMOD; m++) {
				e[m] = a[i].cnt[m] ? a[i].sum[m] / a[i].cnt[m] : NAN;
				if (isfinite(e[m]) && (best < 0 || e[m] < e[best]))
					best = m;
			}
			fprintf(o->out, "%-9s %-11s %7.1f%% %7.1f%% %7.1f%%  %-8s %d/%d/%d\n", a[i].suite,
				a[i].variant, 100 * e[0], 100 * e[1], 100 * e[2],
				best < 0 ? "-" : mod_names[best], a[i].wins[0], a[i].wins[1], a[i].wins[2]);
		}
		fprintf(o->out, "rows within +-20%% by the closest model: %d of %d", score[0], score[1]);
		if (score[2] > 0)
			fprintf(o->out, " (and %d rows no model predicts: no prediction)", score[2]);
		if (score[4] > 0)
			fprintf(o->out, "; against the loops' %s: %d of %d",
				o->meas_mean ? "medians" : "means (--measured mean)", score[3], score[4]);
		fprintf(o->out, "\n");
	}
	if (rc == IBC_OK)
		rc = writer(o->dir, "lop-extrapolation.csv", extra_cols, NEXTRACOLS, &w[1]);
	if (rc == IBC_OK)
		rc = extrapolate(o, t, &pr, w[1]);
	if (rc == IBC_OK)
		rc = writer(o->dir, "lop-fanin.csv", fanin_cols, NFANIN, &w[2]);
	if (rc == IBC_OK)
		rc = fanin_choice(o, t, &pr, w[2], a, na);
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
