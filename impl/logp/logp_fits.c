/* The LoP rows fitted and derived (logp_fits.h). */
#include "logp/logp_fits.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "logp/logp_suite.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXPTS 1024

static const char *const stats_cols[] = { "min_us", "p50_us", "mean_us", "b2b_p50_us" };
static const char *const stats_names[] = { "min", "p50", "mean", "b2b" };
#define NSTATS 4
#define NSTATS_COLS 3 /* the columns; the last is the extra's key (the back-to-back loop's median) */

/* statistic s of row r: a column, or the extra's b2b_p50_us (NAN: none) */
static double row_stat(const struct ibc_csv_table *t, size_t r, int s)
{
	return s < NSTATS_COLS ? ibc_csv_num(t, r, stats_cols[s])
			       : ibc_csv_extra_num(ibc_csv_str(t, r, "extra"), stats_cols[s]);
}

static int row_is(const struct ibc_csv_table *t, size_t r, const char *run_id)
{
	return strcmp(ibc_csv_str(t, r, "suite"), "logp") == 0 &&
	       strcmp(ibc_csv_str(t, r, "run_id"), run_id) == 0;
}

/* The row of (xport, variant, bytes, p) at the largest N, -1 if none. */
static long row_find(const struct ibc_csv_table *t, const char *run_id, const char *xport,
		     const char *variant, size_t bytes, long p, int ranks)
{
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (row_is(t, r, run_id) && strcmp(ibc_csv_str(t, r, "xport"), xport) == 0 &&
		    strcmp(ibc_csv_str(t, r, "variant"), variant) == 0 &&
		    ibc_csv_size(t, r, "bytes") == bytes && ibc_csv_int(t, r, "ranks") == ranks &&
		    (p < 0 || (long)ibc_csv_num(t, r, "fanin") == p))
			return (long)r;
	return -1;
}

/* ------------------------------------------------------------- fits ---- */

static const char *const fit_cols[] = {
	"run_id", "xport", "variant", "bytes", "stat", "model", "ranks", "points", "kept",
	"l1", "l2", "l3", "l4", "l5", "l6", "se1", "se2", "se3", "se4", "se5", "se6",
	"r2", "rmse", "identifiable", "residuals", "rejected", "rule", "starts", "converged",
	"status", "pmax", "form", "nfree", "aicc", "forms", "oversub", "usable", "use",
};
#define NFIT (sizeof(fit_cols) / sizeof(fit_cols[0]))

static const char *const der_cols[] = { "run_id", "xport", "ranks", "quantity", "op", "bytes",
					"stat", "p", "value_us", "source", "status" };
#define NDER (sizeof(der_cols) / sizeof(der_cols[0]))

struct dataset {
	char xport[16], variant[40];
	size_t bytes;
	int ranks;            /* N: each job size is its own data set */
	int oversub;          /* a row of it was measured with more ranks than PUs */
};

/* the distinct (xport, variant, bytes, N) of fan-in kernels */
static size_t datasets_get(const struct ibc_csv_table *t, const char *run_id, struct dataset *ds,
			   size_t cap)
{
	size_t r, k, n = 0;

	for (r = 0; r + 1 < t->nrows; r++) {
		const char *x = ibc_csv_str(t, r, "xport"), *v = ibc_csv_str(t, r, "variant");
		size_t b = ibc_csv_size(t, r, "bytes");
		int N = ibc_csv_int(t, r, "ranks");

		if (!row_is(t, r, run_id) || isnan(ibc_csv_num(t, r, "fanin")))
			continue;
		for (k = 0; k < n; k++)
			if (strcmp(ds[k].xport, x) == 0 && strcmp(ds[k].variant, v) == 0 &&
			    ds[k].bytes == b && ds[k].ranks == N)
				break;
		if (k < n && strcmp(ibc_csv_str(t, r, "oversub"), "1") == 0)
			ds[k].oversub = 1;
		if (k == n && n < cap) {
			ds[n].oversub = strcmp(ibc_csv_str(t, r, "oversub"), "1") == 0;
			snprintf(ds[n].xport, sizeof(ds[n].xport), "%s", x);
			snprintf(ds[n].variant, sizeof(ds[n].variant), "%s", v);
			ds[n].bytes = b;
			ds[n].ranks = N;
			n++;
		}
	}
	return n;
}

static void fmt(char *b, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(b, cap, "%.6g", v);
	else
		b[0] = '\0';
}

static int fit_one(struct ibc_csv_writer *w, const struct ibc_csv_table *t, const char *run_id,
		   const struct dataset *d, int s)
{
	enum ibc_logp_fit_model m = strncmp(d->variant, "rtt-", 4) == 0 ? IBC_LOGP_FIT_RTT
									   : IBC_LOGP_FIT_OV;
	static double p[MAXPTS], y[MAXPTS], res[MAXPTS];
	static unsigned char rej[MAXPTS];
	char f[NFIT][160], resid[4096] = "";
	const char *fp[NFIT];
	struct ibc_logp_fit fit;
	size_t r, n = 0, i, used = 0, ru = 0;
	double pmax = 0;
	int rc, k, usable = 0;

	for (r = 0; r + 1 < t->nrows && n < MAXPTS; r++) {
		double v = row_stat(t, r, s);

		if (!row_is(t, r, run_id) || strcmp(ibc_csv_str(t, r, "xport"), d->xport) != 0 ||
		    strcmp(ibc_csv_str(t, r, "variant"), d->variant) != 0 ||
		    ibc_csv_size(t, r, "bytes") != d->bytes || ibc_csv_int(t, r, "ranks") != d->ranks ||
		    !isfinite(v))
			continue;
		p[n] = ibc_csv_num(t, r, "fanin");
		y[n] = v;
		if (p[n] > pmax)
			pmax = p[n];
		n++;
	}
	if (n == 0 && s >= NSTATS_COLS)
		return IBC_OK; /* a kernel without the loop: no row */
	memset(&fit, 0, sizeof(fit));
	memset(rej, 0, sizeof(rej));
	rc = n > 0 ? ibc_logp_fit_select(m, p, y, n, &fit, rej, res) : IBC_ERR_UNSUPPORTED;
	for (i = 0; i < NFIT; i++) {
		f[i][0] = '\0';
		fp[i] = f[i];
	}
	fp[0] = run_id;
	fp[1] = d->xport;
	fp[2] = d->variant;
	snprintf(f[3], 160, "%zu", d->bytes);
	fp[4] = stats_names[s];
	fp[5] = ibc_logp_fit_model_name(m);
	snprintf(f[6], 160, "%d", d->ranks);
	snprintf(f[7], 160, "%zu", n);
	if (rc == IBC_OK) {
		snprintf(f[8], 160, "%zu", fit.nkept);
		for (k = 0; k < fit.npar; k++) {
			fmt(f[9 + k], 160, fit.lambda[k]);
			fmt(f[15 + k], 160, fit.se[k]);
		}
		fmt(f[21], 160, fit.r2);
		fmt(f[22], 160, fit.rmse);
		snprintf(f[23], 160, "%d", fit.identifiable);
		/* every point's residual t - f(p), "p:r;..." in the order of the rows */
		for (i = 0; i < n && ru + 40 < sizeof(resid); i++)
			ru += (size_t)snprintf(resid + ru, sizeof(resid) - ru, "%s%g:%.4g", ru ? ";" : "",
					       p[i], res[i]);
		fp[24] = resid;
		for (i = 0; i < n; i++)
			if (rej[i] && used + 16 < 160)
				used += (size_t)snprintf(f[25] + used, 160 - used, "%sp=%g", used ? ";" : "",
							 p[i]);
		fp[26] = fit.rule;
		snprintf(f[27], 160, "%d", fit.starts);
		snprintf(f[28], 160, "%d", fit.converged);
		snprintf(f[29], 160, "ok");
		fp[31] = fit.form;
		snprintf(f[32], 160, "%d", fit.nfree);
		fmt(f[33], 160, fit.aicc);
		fp[34] = fit.cands;
		usable = ibc_logp_fit_usable(&fit) && !d->oversub;
		snprintf(f[37], 160, "%s", usable		? "yes"
					  : d->oversub		? "no: oversubscribed (ranks > PUs)"
					  : !fit.identifiable	? "no: not identifiable"
					  : !fit.positive	? "no: fitted curve <= 0"
								: "no: too few points for AICc");
	} else {
		if (rc == IBC_ERR_UNSUPPORTED)
			snprintf(f[29], 160, "too few points: %zu (a usable fit needs 4 or more; p = "
				 "1..N-1: more ranks)", n);
		else if (rc == IBC_ERR_NOTFOUND)
			snprintf(f[29], 160, "no fit: none of %d starts converged", fit.starts);
		else
			snprintf(f[29], 160, "no fit: %s", ibc_status_str(rc));
	}
	snprintf(f[30], 160, "%g", pmax);
	snprintf(f[35], 160, "%d", d->oversub);
	snprintf(f[36], 160, "%d", usable);
	if (rc != IBC_OK)
		snprintf(f[37], 160, "no: no fit");
	return ibc_csv_writer_row(w, fp);
}

/* --------------------------------------------------------- derived ---- */

/* One derived value.  A value < 0 is no time: `neg` says why (NULL: the
 * value is a slope and may be < 0); LogGP's o, g, L, G are then written as
 * 0, what the model uses ("held at 0: why"), L and L_list left empty ("not
 * physical: why"). */
static int der_row(struct ibc_csv_writer *w, const char *run_id, const char *xport, int ranks,
		   const char *q, const char *op, size_t bytes, const char *stat, long p, double v,
		   const char *src, const char *neg)
{
	char b[4][32], st[256] = "ok";
	const char *f[NDER];

	if (!isfinite(v))
		return IBC_OK;
	if (v < 0 && neg != NULL) {
		int hold = strncmp(q, "loggp_", 6) == 0;

		snprintf(st, sizeof(st), "%s: %s", hold ? "held at 0" : "not physical", neg);
		v = hold ? 0 : NAN;
	}
	snprintf(b[0], 32, "%zu", bytes);
	if (p >= 0)
		snprintf(b[1], 32, "%ld", p);
	else
		b[1][0] = '\0';
	if (isfinite(v))
		snprintf(b[2], 32, "%.6g", v);
	else
		b[2][0] = '\0';
	snprintf(b[3], 32, "%d", ranks);
	f[0] = run_id;
	f[1] = xport;
	f[2] = b[3];
	f[3] = q;
	f[4] = op;
	f[5] = b[0];
	f[6] = stat;
	f[7] = b[1];
	f[8] = b[2];
	f[9] = src;
	f[10] = st;
	return ibc_csv_writer_row(w, f);
}

/* L(p) = RTT(p)/2 - post (post = o_s(p) + o_s(1), or p o_s(p) + o_s(1)
 * for L_list); < 0 is marked, with both sides */
static int der_L(struct ibc_csv_writer *w, const char *run_id, const struct dataset *d, int list,
		 const char *op, const char *stat, long p, double rtt, double post, const char *src)
{
	char why[200];

	snprintf(why, sizeof(why), "%s = %.4g us exceeds RTT(p)/2 = %.4g us on this transport "
		 "(the paper's o << L(p) fails)", list ? "p o_s(p) + o_s(1)" : "o_s(p) + o_s(1)",
		 post, rtt / 2);
	return der_row(w, run_id, d->xport, d->ranks, list ? "L_list" : "L", op, d->bytes, stat, p,
		       rtt / 2 - post, src, why);
}

/* §4.4's L(p) and L_list(p), from the rows and from the fits */
static int derive_L(struct ibc_csv_writer *w, const struct ibc_csv_table *t, const char *run_id,
		    const struct dataset *d, const struct ibc_logp_params *pr)
{
	static const char *const ops[] = { "send", "write" };
	int list = strstr(d->variant, "-list") != NULL, o, s, rc = IBC_OK;
	char rttv[48], osv[48];
	long p;

	if (strncmp(d->variant, "rtt-", 4) != 0 || strstr(d->variant, "-1n") == NULL)
		return IBC_OK;
	for (o = 0; o < 2 && strstr(d->variant, ops[o]) == NULL; o++)
		;
	if (o == 2)
		return IBC_OK;
	snprintf(rttv, sizeof(rttv), "%s", d->variant);
	snprintf(osv, sizeof(osv), "os-%s%s", ops[o], list ? "-list" : "");
	for (s = 0; s < NSTATS_COLS && rc == IBC_OK; s++) {
		const struct ibc_logp_curve *cr = ibc_logp_params_curve(pr, d->xport, rttv, stats_names[s],
									d->bytes, d->ranks);
		const struct ibc_logp_curve *co = ibc_logp_params_curve(pr, d->xport, osv, stats_names[s],
									d->bytes, d->ranks);
		long r1 = row_find(t, run_id, d->xport, osv, d->bytes, 1, d->ranks);

		for (p = 1; p < d->ranks && rc == IBC_OK; p++) {
			long rr = row_find(t, run_id, d->xport, rttv, d->bytes, p, d->ranks);
			long ro = row_find(t, run_id, d->xport, osv, d->bytes, p, d->ranks);

			if (rr >= 0 && ro >= 0 && r1 >= 0) {
				double rtt = ibc_csv_num(t, (size_t)rr, stats_cols[s]);
				double os = ibc_csv_num(t, (size_t)ro, stats_cols[s]);
				double os1 = ibc_csv_num(t, (size_t)r1, stats_cols[s]);

				rc = der_L(w, run_id, d, list, ops[o], stats_names[s], p, rtt,
					   (list ? (double)p : 1.0) * os + os1, "measured");
			}
			if (rc == IBC_OK && cr && co && cr->ranks == d->ranks && co->ranks == d->ranks &&
			    cr->bytes == d->bytes && co->bytes == d->bytes) {
				double rtt = ibc_logp_fit_eval(IBC_LOGP_FIT_RTT, cr->fit.lambda, (double)p);
				double os = ibc_logp_fit_eval(IBC_LOGP_FIT_OV, co->fit.lambda, (double)p);
				double os1 = ibc_logp_fit_eval(IBC_LOGP_FIT_OV, co->fit.lambda, 1.0);

				rc = der_L(w, run_id, d, list, ops[o], stats_names[s], p, rtt,
					   (list ? (double)p : 1.0) * os + os1, "fit");
			}
		}
	}
	return rc;
}

#define NETGAUGE_NEG "Netgauge's estimate, a difference of PRTT medians, is < 0"
#define NETGAUGE_L_NEG "PRTT(1,0,s)/2 - 2o < 0: the overheads exceed half the round trip on " \
		       "this transport"

/* LogGP by Netgauge's PRTT method, per transport, N and size; G over sizes */
static int derive_loggp(struct ibc_csv_writer *w, const struct ibc_csv_table *t, const char *run_id)
{
	struct { char xport[16]; int n; } jobs[32];
	size_t nj = 0, r, k, sizes[32], ns, i;
	int rc = IBC_OK;

	for (r = 0; r + 1 < t->nrows; r++) {
		const char *x = ibc_csv_str(t, r, "xport");
		int N = ibc_csv_int(t, r, "ranks");

		if (!row_is(t, r, run_id) || strcmp(ibc_csv_str(t, r, "variant"), "loggp-prtt1") != 0 ||
		    strcmp(ibc_csv_str(t, r, "oversub"), "1") == 0)
			continue;
		for (k = 0; k < nj && (strcmp(jobs[k].xport, x) != 0 || jobs[k].n != N); k++)
			;
		if (k == nj && nj < 32) {
			snprintf(jobs[nj].xport, sizeof(jobs[nj].xport), "%s", x);
			jobs[nj++].n = N;
		}
	}
	for (k = 0; k < nj && rc == IBC_OK; k++) {
		const char *x = jobs[k].xport;
		double gs[32], ss[32], a, G = NAN;
		size_t ng = 0;
		int N = jobs[k].n;

		ns = 0;
		for (r = 0; r + 1 < t->nrows && ns < 32; r++)
			if (row_is(t, r, run_id) && strcmp(ibc_csv_str(t, r, "xport"), x) == 0 &&
			    ibc_csv_int(t, r, "ranks") == N &&
			    strcmp(ibc_csv_str(t, r, "variant"), "loggp-prtt1") == 0) {
				size_t b = ibc_csv_size(t, r, "bytes");

				for (i = 0; i < ns && sizes[i] != b; i++)
					;
				if (i == ns)
					sizes[ns++] = b;
			}
		for (i = 0; i < ns && rc == IBC_OK; i++) {
			long r1 = row_find(t, run_id, x, "loggp-prtt1", sizes[i], -1, N);
			long rn = row_find(t, run_id, x, "loggp-prttn", sizes[i], -1, N);
			long rd = row_find(t, run_id, x, "loggp-prttd", sizes[i], -1, N);
			double p1, pn, pd, d, g, o, L;

			if (r1 < 0 || rn < 0 || rd < 0)
				continue;
			p1 = ibc_csv_num(t, (size_t)r1, "p50_us");
			pn = ibc_csv_num(t, (size_t)rn, "p50_us");
			pd = ibc_csv_num(t, (size_t)rd, "p50_us");
			d = ibc_csv_extra_num(ibc_csv_str(t, (size_t)rd, "extra"), "d_us");
			g = (pn - p1) / (IBC_LOGP_PRTT_N - 1);
			o = (pd - p1) / (IBC_LOGP_PRTT_N - 1) - d;
			L = p1 / 2 - 2 * o;
			gs[ng] = g;
			ss[ng++] = (double)sizes[i];
			rc = der_row(w, run_id, x, N, "loggp_o", "send", sizes[i], "p50", -1, o, "measured",
				     NETGAUGE_NEG);
			if (rc == IBC_OK)
				rc = der_row(w, run_id, x, N, "loggp_g", "send", sizes[i], "p50", -1, g,
					     "measured", NETGAUGE_NEG);
			if (rc == IBC_OK)
				rc = der_row(w, run_id, x, N, "loggp_L", "send", sizes[i], "p50", -1, L,
					     "measured", NETGAUGE_L_NEG);
		}
		if (rc == IBC_OK && ng >= 2 && ibc_stats_line_fit(ss, gs, ng, &a, &G, NULL) == IBC_OK) {
			rc = der_row(w, run_id, x, N, "loggp_G", "send", 0, "p50", -1, G, "measured",
				     NETGAUGE_NEG);
		}
	}
	return rc;
}

/* the last run_id with logp rows */
static const char *run_last(const struct ibc_csv_table *t)
{
	const char *id = NULL;
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_str(t, r, "suite"), "logp") == 0)
			id = ibc_csv_str(t, r, "run_id");
	return id;
}

int ibc_logp_fits_write(const char *dir, const char *run_id)
{
	static struct dataset ds[IBC_LOGP_MAX_CURVES / NSTATS];
	static struct ibc_logp_params pr;
	struct ibc_csv_writer *w = NULL;
	struct ibc_csv_table *t = NULL;
	char path[4200], path2[4200], id[64];
	size_t n, i;
	int rc, s;

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	rc = ibc_csv_read(path, &t);
	if (rc != IBC_OK) {
		ibc_error("logp: reading %s: %s", path, ibc_status_str(rc));
		return rc;
	}
	if (run_id == NULL || run_id[0] == '\0')
		run_id = run_last(t);
	if (run_id == NULL) {
		ibc_error("logp: %s has no logp rows", path);
		ibc_csv_table_free(t);
		return IBC_ERR_NOTFOUND;
	}
	snprintf(id, sizeof(id), "%s", run_id);
	n = datasets_get(t, id, ds, sizeof(ds) / sizeof(ds[0]));
	snprintf(path, sizeof(path), "%s/fits.csv", dir);
	rc = ibc_csv_writer_open(path, fit_cols, NFIT, 0, &w);
	for (i = 0; i < n && rc == IBC_OK; i++)
		for (s = 0; s < NSTATS && rc == IBC_OK; s++)
			rc = fit_one(w, t, id, &ds[i], s);
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	w = NULL;
	snprintf(path2, sizeof(path2), "%s/logp-derived.csv", dir);
	/* L(p) uses the fits just written */
	if (rc == IBC_OK)
		rc = ibc_logp_params_load(dir, &pr);
	if (rc == IBC_OK)
		rc = ibc_csv_writer_open(path2, der_cols, NDER, 0, &w);
	for (i = 0; i < n && rc == IBC_OK; i++)
		rc = derive_L(w, t, id, &ds[i], &pr);
	if (rc == IBC_OK)
		rc = derive_loggp(w, t, id);
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	if (rc != IBC_OK)
		ibc_error("logp: writing %s and %s: %s", path, path2, ibc_status_str(rc));
	ibc_logp_params_free(&pr);
	ibc_csv_table_free(t);
	return rc;
}

/* ----------------------------------------------------------- loading --- */

static int fits_load(const char *path, struct ibc_logp_params *out)
{
	struct ibc_csv_table *t = NULL;
	size_t r;
	int rc, k;

	if (access(path, R_OK) != 0) {
		ibc_error("logp: no fitted model: %s: %s (run `ibchar run logp` into that "
			  "directory, or give another with --fits)", path, strerror(errno));
		return IBC_ERR_NOTFOUND;
	}
	rc = ibc_csv_read(path, &t);
	if (rc != IBC_OK)
		return rc; /* said by the reader */
	if (ibc_csv_column(t, "l1") < 0 || ibc_csv_column(t, "status") < 0 ||
	    ibc_csv_column(t, "ranks") < 0) {
		ibc_error("logp: %s is not a fits.csv of ibchar's logp suite", path);
		ibc_csv_table_free(t);
		return IBC_ERR_PROTO;
	}
	for (r = 0; r + 1 < t->nrows && out->ncurves < IBC_LOGP_MAX_CURVES; r++) {
		struct ibc_logp_curve *c = &out->curve[out->ncurves++];
		char col[16];

		snprintf(out->run_id, sizeof(out->run_id), "%s", ibc_csv_str(t, r, "run_id"));
		snprintf(c->xport, sizeof(c->xport), "%s", ibc_csv_str(t, r, "xport"));
		snprintf(c->variant, sizeof(c->variant), "%s", ibc_csv_str(t, r, "variant"));
		snprintf(c->stat, sizeof(c->stat), "%s", ibc_csv_str(t, r, "stat"));
		c->bytes = ibc_csv_size(t, r, "bytes");
		c->ranks = ibc_csv_int(t, r, "ranks");
		/* a fit the model may use: fitted, identifiable, positive, not
		 * oversubscribed (fits.csv of older runs: fitted) */
		c->ok = strcmp(ibc_csv_str(t, r, "status"), "ok") == 0 &&
			(ibc_csv_column(t, "usable") < 0 || strcmp(ibc_csv_str(t, r, "usable"), "1") == 0);
		c->pmax = ibc_csv_num(t, r, "pmax");
		c->fit.model = strcmp(ibc_csv_str(t, r, "model"), "rtt") == 0 ? IBC_LOGP_FIT_RTT
									       : IBC_LOGP_FIT_OV;
		c->fit.npar = ibc_logp_fit_npar(c->fit.model);
		c->fit.r2 = ibc_csv_num(t, r, "r2");
		for (k = 0; k < c->fit.npar; k++) {
			snprintf(col, sizeof(col), "l%d", k + 1);
			c->fit.lambda[k] = ibc_csv_num(t, r, col);
			if (c->ok && !isfinite(c->fit.lambda[k]))
				c->ok = 0;
		}
	}
	ibc_csv_table_free(t);
	return IBC_OK;
}

/* LogGP's o, g, L per (xport, N, size), then G (bytes 0) for each size of its (xport, N) */
static void loggp_load(const char *path, struct ibc_logp_params *out)
{
	struct ibc_csv_table *t = NULL;
	size_t r, i;
	int pass;

	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return; /* no LogGP: its predictions are left out */
	if (ibc_csv_column(t, "ranks") < 0) {
		ibc_csv_table_free(t);
		return;
	}
	for (pass = 0; pass < 2; pass++)
		for (r = 0; r + 1 < t->nrows; r++) {
			const char *q = ibc_csv_str(t, r, "quantity"), *x = ibc_csv_str(t, r, "xport");
			size_t b = ibc_csv_size(t, r, "bytes");
			int n = ibc_csv_int(t, r, "ranks");
			double v = ibc_csv_num(t, r, "value_us");
			int held = strncmp(ibc_csv_str(t, r, "status"), "held at 0", 9) == 0;
			struct ibc_logp_loggp *g;

			if (strncmp(q, "loggp_", 6) != 0 || (pass == 0) != (b > 0))
				continue;
			if (pass == 1) {
				for (i = 0; i < out->nggp; i++)
					if (strcmp(out->ggp[i].xport, x) == 0 && out->ggp[i].ranks == n) {
						out->ggp[i].G = v;
						out->ggp[i].held |= held;
					}
				continue;
			}
			for (i = 0; i < out->nggp; i++)
				if (strcmp(out->ggp[i].xport, x) == 0 && out->ggp[i].bytes == b &&
				    out->ggp[i].ranks == n)
					break;
			if (i == out->nggp) {
				if (out->nggp == IBC_LOGP_MAX_GGP)
					continue;
				g = &out->ggp[out->nggp++];
				snprintf(g->xport, sizeof(g->xport), "%s", x);
				g->bytes = b;
				g->ranks = n;
				g->o = g->g = g->L = g->G = NAN;
				g->held = 0;
			}
			g = &out->ggp[i];
			g->held |= held;
			if (strcmp(q, "loggp_o") == 0)
				g->o = v;
			else if (strcmp(q, "loggp_g") == 0)
				g->g = v;
			else if (strcmp(q, "loggp_L") == 0)
				g->L = v;
		}
	ibc_csv_table_free(t);
}

/* a kernel row's p: its fanin column, else its extra's p (the copy
 * kernels: no peers swept, p = 1); NAN for PRTT's rows */
static double row_p(const struct ibc_csv_table *t, size_t r)
{
	double p = ibc_csv_num(t, r, "fanin");

	return isnan(p) ? ibc_csv_extra_num(ibc_csv_str(t, r, "extra"), "p") : p;
}

/* the fitted run's kernel rows */
static int points_load(const char *path, struct ibc_logp_params *out)
{
	struct ibc_csv_table *t = NULL;
	size_t r;
	int s;

	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return IBC_OK;
	out->pts = calloc(t->nrows, sizeof(*out->pts));
	if (out->pts == NULL) {
		ibc_csv_table_free(t);
		return IBC_ERR_NOMEM;
	}
	for (r = 0; r + 1 < t->nrows; r++) {
		struct ibc_logp_point *q = &out->pts[out->npts];

		/* a row measured with more ranks than PUs times the scheduler */
		if (!row_is(t, r, out->run_id) || isnan(row_p(t, r)) ||
		    strcmp(ibc_csv_str(t, r, "oversub"), "1") == 0)
			continue;
		snprintf(q->xport, sizeof(q->xport), "%s", ibc_csv_str(t, r, "xport"));
		snprintf(q->variant, sizeof(q->variant), "%s", ibc_csv_str(t, r, "variant"));
		q->bytes = ibc_csv_size(t, r, "bytes");
		q->ranks = ibc_csv_int(t, r, "ranks");
		q->p = (int)row_p(t, r);
		for (s = 0; s < NSTATS; s++)
			q->v[s] = row_stat(t, r, s);
		out->npts++;
	}
	ibc_csv_table_free(t);
	return IBC_OK;
}

int ibc_logp_params_load(const char *dir, struct ibc_logp_params *out)
{
	char path[4200];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/fits.csv", dir);
	rc = fits_load(path, out);
	if (rc != IBC_OK)
		return rc;
	snprintf(path, sizeof(path), "%s/logp-derived.csv", dir);
	loggp_load(path, out);
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	return points_load(path, out);
}

void ibc_logp_params_free(struct ibc_logp_params *pr)
{
	free(pr->pts);
	pr->pts = NULL;
	pr->npts = 0;
}

const struct ibc_logp_curve *ibc_logp_params_curve(const struct ibc_logp_params *pr, const char *xport,
						   const char *variant, const char *stat,
						   size_t bytes, int ranks)
{
	const struct ibc_logp_curve *best = NULL;
	size_t i;

	for (i = 0; i < pr->ncurves; i++) {
		const struct ibc_logp_curve *c = &pr->curve[i];

		if (!c->ok || c->bytes != bytes || strcmp(c->xport, xport) != 0 ||
		    strcmp(c->variant, variant) != 0 || strcmp(c->stat, stat) != 0)
			continue;
		if (ranks > 0 ? c->ranks == ranks : best == NULL || c->ranks > best->ranks)
			best = c;
	}
	return best;
}

/* the measured row at (N, p), or at the largest p <= p of N; NULL if none */
static const struct ibc_logp_point *point_find(const struct ibc_logp_params *pr, const char *xport,
					       const char *variant, size_t bytes, int n, int p)
{
	const struct ibc_logp_point *best = NULL;
	size_t i;

	for (i = 0; i < pr->npts; i++) {
		const struct ibc_logp_point *q = &pr->pts[i];

		if (q->ranks != n || q->bytes != bytes || q->p > p || strcmp(q->xport, xport) != 0 ||
		    strcmp(q->variant, variant) != 0)
			continue;
		if (best == NULL || q->p > best->p)
			best = q;
	}
	return best;
}

double ibc_logp_params_value(const struct ibc_logp_params *pr, const char *xport,
			     const char *variant, int stat, size_t bytes, int n, int p,
			     unsigned *notes)
{
	const struct ibc_logp_curve *c = ibc_logp_params_curve(pr, xport, variant, stats_names[stat],
							       bytes, n);
	const struct ibc_logp_point *q;
	int nmax = 0;
	size_t i;

	if (c != NULL && p <= c->pmax)
		return ibc_logp_fit_eval(c->fit.model, c->fit.lambda, p);
	q = point_find(pr, xport, variant, bytes, n, p);
	if (q != NULL && q->p == p) {
		*notes |= IBC_LOGP_NOTE_POINT;
		return q->v[stat];
	}
	/* not at this N: the largest N's fit, else its rows */
	c = ibc_logp_params_curve(pr, xport, variant, stats_names[stat], bytes, 0);
	for (i = 0; i < pr->npts; i++)
		if (pr->pts[i].bytes == bytes && pr->pts[i].ranks > nmax &&
		    strcmp(pr->pts[i].xport, xport) == 0 && strcmp(pr->pts[i].variant, variant) == 0)
			nmax = pr->pts[i].ranks;
	if (c != NULL && c->ranks >= nmax) {
		if (c->ranks != n)
			*notes |= IBC_LOGP_NOTE_OTHER_N;
		if (p > c->pmax)
			*notes |= IBC_LOGP_NOTE_KMAX;
		return ibc_logp_fit_eval(c->fit.model, c->fit.lambda, p > c->pmax ? c->pmax : p);
	}
	q = point_find(pr, xport, variant, bytes, nmax, p);
	if (q == NULL)
		return NAN;
	*notes |= IBC_LOGP_NOTE_POINT | (nmax != n ? IBC_LOGP_NOTE_OTHER_N : 0) |
		  (q->p < p ? IBC_LOGP_NOTE_KMAX : 0);
	return q->v[stat];
}
