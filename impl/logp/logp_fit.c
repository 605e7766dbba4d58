/* Least-squares fits of the LoP model; the method is described in
 * logp_fit.h. */
#include "logp/logp_fit.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGP_FIT_POLE_MIN (-1.0 + 1e-6) /* pole parameter > this */
#define LOGP_FIT_L5_MAX 5.0             /* |l5| < this (rtt) */
#define LOGP_FIT_MAXITER 400
#define LOGP_FIT_XTOL 1e-10
#define LOGP_FIT_GTOL 1e-10
#define LOGP_FIT_RANK_TOL 1e-10  /* eigenvalues of the scaled J^T J */
#define LOGP_FIT_COVAR_TOL 1e-5  /* on R of the scaled J: sqrt(RANK_TOL) */
#define LOGP_FIT_LOAD_TOL 1e-12  /* squared null-space loading */
#define LOGP_FIT_BOUND_TOL 1e-6  /* pole - its minimum, 1 - |l5|/5: "at the bound" */
#define LOGP_FIT_KKT_TOL 1e-5    /* cos(residual, column): relative rss gain < 1e-10 */
#define LOGP_FIT_MAD_K 4.0
#define LOGP_FIT_MAD_SCALE 1.4826
#define LOGP_FIT_BIG 1e100       /* stands in for a non-finite residual */
#define LOGP_FIT_MAXSTARTS 48

static const char logp_fit_rule_text[] =
	"|r-med(r)| > 4*1.4826*MAD(r), MAD>0, n>=npar+3, at most n/10, keep npar+1 distinct p, one refit";

_Static_assert(sizeof(logp_fit_rule_text) <= sizeof(((struct ibc_logp_fit *)0)->rule),
	       "the rule text fits in struct ibc_logp_fit.rule");

static const double logp_fit_rtt_l2_grid[] = { -0.5, 0.0, 1.0, 4.0 };
static const double logp_fit_rtt_l5_grid[] = { -1.0, -0.1, -0.01, 0.01, 0.1 };
static const double logp_fit_ov_l3_grid[] = { -0.9, -0.5, 0.0, 1.0, 4.0, 16.0, 64.0, 256.0 };

#define LOGP_FIT_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The points a pass fits (already restricted to the kept ones), and the
 * parameters held at a bound (lfix) while the others are polished.  The
 * solver's vector x holds the u of the free parameters, in order. */
struct logp_fit_data {
	enum ibc_logp_fit_model model;
	const double *p;
	const double *t;
	size_t n;
	unsigned char fixed[IBC_LOGP_FIT_MAXPAR];
	double lfix[IBC_LOGP_FIT_MAXPAR];
};

const char *ibc_logp_fit_model_name(enum ibc_logp_fit_model m)
{
	switch (m) {
	case IBC_LOGP_FIT_RTT:
		return "rtt";
	case IBC_LOGP_FIT_OV:
		return "ov";
	}
	return "?";
}

int ibc_logp_fit_npar(enum ibc_logp_fit_model m)
{
	switch (m) {
	case IBC_LOGP_FIT_RTT:
		return 6;
	case IBC_LOGP_FIT_OV:
		return 3;
	}
	return 0;
}

double ibc_logp_fit_eval(enum ibc_logp_fit_model m, const double *lambda, double p)
{
	const double *l = lambda;

	if (!l)
		return NAN;
	switch (m) {
	case IBC_LOGP_FIT_RTT:
		return l[0] / (l[1] + p) + l[2] + l[3] * (1.0 - exp(l[4] * (p - l[5])));
	case IBC_LOGP_FIT_OV:
		return l[0] + l[1] / (l[2] + p);
	}
	return NAN;
}

/* ------------------------------------------------- parametrisation ---- */

static int logp_fit_pole_index(enum ibc_logp_fit_model m)
{
	return m == IBC_LOGP_FIT_RTT ? 1 : 2;
}

static int logp_fit_is_l5(enum ibc_logp_fit_model m, int j)
{
	return m == IBC_LOGP_FIT_RTT && j == 4;
}

static void logp_fit_u_to_lambda(enum ibc_logp_fit_model m, const double *u, double *l)
{
	int npar = ibc_logp_fit_npar(m);

	for (int j = 0; j < npar; j++) {
		if (j == logp_fit_pole_index(m))
			l[j] = LOGP_FIT_POLE_MIN + exp(u[j]);
		else if (logp_fit_is_l5(m, j))
			l[j] = LOGP_FIT_L5_MAX * tanh(u[j]);
		else
			l[j] = u[j];
	}
}

static void logp_fit_lambda_to_u(enum ibc_logp_fit_model m, const double *l, double *u)
{
	int npar = ibc_logp_fit_npar(m);

	for (int j = 0; j < npar; j++) {
		if (j == logp_fit_pole_index(m)) {
			u[j] = log(fmax(l[j] - LOGP_FIT_POLE_MIN, 1e-12));
		} else if (logp_fit_is_l5(m, j)) {
			double x = l[j] / LOGP_FIT_L5_MAX;

			x = fmin(fmax(x, -1.0 + 1e-12), 1.0 - 1e-12);
			u[j] = atanh(x);
		} else {
			u[j] = l[j];
		}
	}
}

/* d lambda_j / d u_j */
static double logp_fit_dlambda_du(enum ibc_logp_fit_model m, const double *u, int j)
{
	if (j == logp_fit_pole_index(m))
		return exp(u[j]);
	if (logp_fit_is_l5(m, j)) {
		double th = tanh(u[j]);

		return LOGP_FIT_L5_MAX * (1.0 - th * th);
	}
	return 1.0;
}

/* The gradient of the model at p with respect to lambda. */
static void logp_fit_grad(enum ibc_logp_fit_model m, const double *l, double p, double *g)
{
	if (m == IBC_LOGP_FIT_RTT) {
		double d = l[1] + p;
		double e = exp(l[4] * (p - l[5]));

		g[0] = 1.0 / d;
		g[1] = -l[0] / (d * d);
		g[2] = 1.0;
		g[3] = 1.0 - e;
		g[4] = -l[3] * (p - l[5]) * e;
		g[5] = l[3] * l[4] * e;
	} else {
		double d = l[2] + p;

		g[0] = 1.0;
		g[1] = 1.0 / d;
		g[2] = -l[1] / (d * d);
	}
}

/* --------------------------------------------------- GSL callbacks ---- */

/* lambda and, when du is not NULL, d lambda_j / d u_j (0 for a fixed
 * parameter) from x, the u of the free parameters. */
static void logp_fit_x_lambda(const struct logp_fit_data *d, const double *x, double *l,
			      double *du)
{
	int npar = ibc_logp_fit_npar(d->model), k = 0;
	double u[IBC_LOGP_FIT_MAXPAR];

	for (int j = 0; j < npar; j++)
		u[j] = d->fixed[j] ? 0.0 : x[k++];
	logp_fit_u_to_lambda(d->model, u, l);
	for (int j = 0; j < npar; j++) {
		if (d->fixed[j])
			l[j] = d->lfix[j];
		if (du)
			du[j] = d->fixed[j] ? 0.0 : logp_fit_dlambda_du(d->model, u, j);
	}
}

/* f_i = model(p_i) - t_i */
static int logp_fit_cb_f(const gsl_vector *x, void *params, gsl_vector *f)
{
	const struct logp_fit_data *d = params;
	double l[IBC_LOGP_FIT_MAXPAR];

	logp_fit_x_lambda(d, gsl_vector_const_ptr(x, 0), l, NULL);
	for (size_t i = 0; i < d->n; i++) {
		double r = ibc_logp_fit_eval(d->model, l, d->p[i]) - d->t[i];

		if (!isfinite(r))
			r = LOGP_FIT_BIG;
		gsl_vector_set(f, i, r);
	}
	return GSL_SUCCESS;
}

/* J_ik = d model(p_i) / d x_k, x_k the u of the k-th free parameter */
static void logp_fit_jac_fill(const struct logp_fit_data *d, const double *x, gsl_matrix *J)
{
	int npar = ibc_logp_fit_npar(d->model);
	double l[IBC_LOGP_FIT_MAXPAR], du[IBC_LOGP_FIT_MAXPAR], g[IBC_LOGP_FIT_MAXPAR];

	logp_fit_x_lambda(d, x, l, du);
	for (size_t i = 0; i < d->n; i++) {
		size_t k = 0;

		logp_fit_grad(d->model, l, d->p[i], g);
		for (int j = 0; j < npar; j++) {
			double v = g[j] * du[j];

			if (d->fixed[j])
				continue;
			gsl_matrix_set(J, i, k++, isfinite(v) ? v : 0.0);
		}
	}
}

static int logp_fit_cb_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
	logp_fit_jac_fill(params, gsl_vector_const_ptr(x, 0), J);
	return GSL_SUCCESS;
}

/* ------------------------------------------------------------ helpers ---- */

static double logp_fit_rss(enum ibc_logp_fit_model m, const double *l, const double *p,
			   const double *t, size_t n)
{
	double rss = 0.0;

	for (size_t i = 0; i < n; i++) {
		double r = t[i] - ibc_logp_fit_eval(m, l, p[i]);

		rss += r * r;
	}
	return rss;
}

static size_t logp_fit_distinct_count(const double *p, size_t n, double *scratch)
{
	size_t k = 0;

	memcpy(scratch, p, n * sizeof(*p));
	ibc_stats_sort(scratch, n);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || scratch[i] != scratch[i - 1])
			k++;
	return k;
}

/* The median of v[0..n-1] (n >= 1), using scratch. */
static double logp_fit_median(const double *v, size_t n, double *scratch)
{
	memcpy(scratch, v, n * sizeof(*v));
	ibc_stats_sort(scratch, n);
	return ibc_stats_quantile_sorted(scratch, n, 0.5);
}

/* Least-squares values of the parameters the model is linear in, for the
 * nonlinear ones already in l.  Falls back to a rough guess from the data. */
static void logp_fit_linear_init(const struct logp_fit_data *d, gsl_multifit_linear_workspace *lw,
				 gsl_matrix *X, gsl_vector *y, double *l)
{
	enum ibc_logp_fit_model m = d->model;
	size_t ncol = m == IBC_LOGP_FIT_RTT ? 3 : 2;
	double c_buf[3], cov_buf[9], chisq = 0.0, tmin = d->t[0], pmin = d->p[0], tpmin = d->t[0];
	gsl_vector_view c = gsl_vector_view_array(c_buf, ncol);
	gsl_matrix_view cov = gsl_matrix_view_array(cov_buf, ncol, ncol);
	gsl_matrix_view Xv = gsl_matrix_submatrix(X, 0, 0, d->n, ncol);
	size_t rank = 0;
	int ok;

	for (size_t i = 0; i < d->n; i++) {
		double p = d->p[i];

		if (m == IBC_LOGP_FIT_RTT) {
			gsl_matrix_set(X, i, 0, 1.0 / (l[1] + p));
			gsl_matrix_set(X, i, 1, 1.0);
			gsl_matrix_set(X, i, 2, 1.0 - exp(l[4] * (p - l[5])));
		} else {
			gsl_matrix_set(X, i, 0, 1.0);
			gsl_matrix_set(X, i, 1, 1.0 / (l[2] + p));
		}
		gsl_vector_set(y, i, d->t[i]);
		if (d->t[i] < tmin)
			tmin = d->t[i];
		if (p < pmin || (p == pmin && d->t[i] < tpmin)) {
			pmin = p;
			tpmin = d->t[i];
		}
	}
	ok = gsl_multifit_linear_tsvd(&Xv.matrix, y, 1e-12, &c.vector, &cov.matrix, &chisq, &rank,
				      lw) == GSL_SUCCESS;
	for (size_t k = 0; ok && k < ncol; k++)
		ok = isfinite(c_buf[k]);
	if (m == IBC_LOGP_FIT_RTT) {
		if (ok) {
			l[0] = c_buf[0];
			l[2] = c_buf[1];
			l[3] = c_buf[2];
		} else {
			l[2] = tmin;
			l[0] = (tpmin - tmin) * (l[1] + pmin);
			l[3] = 0.0;
		}
	} else {
		if (ok) {
			l[0] = c_buf[0];
			l[1] = c_buf[1];
		} else {
			l[0] = tmin;
			l[1] = (tpmin - tmin) * (l[2] + pmin);
		}
	}
}

/* Fills starts (in u) with the grid; returns how many. */
static int logp_fit_grid(const struct logp_fit_data *d, gsl_multifit_linear_workspace *lw,
			 gsl_matrix *X, gsl_vector *y, double (*starts)[IBC_LOGP_FIT_MAXPAR])
{
	double l[IBC_LOGP_FIT_MAXPAR] = { 0 };
	double pmin = d->p[0], pmax = d->p[0];
	int k = 0;

	for (size_t i = 1; i < d->n; i++) {
		pmin = fmin(pmin, d->p[i]);
		pmax = fmax(pmax, d->p[i]);
	}
	if (d->model == IBC_LOGP_FIT_RTT) {
		const double l6s[2] = { pmin, pmax };

		for (size_t a = 0; a < LOGP_FIT_NELEM(logp_fit_rtt_l2_grid); a++)
			for (size_t b = 0; b < LOGP_FIT_NELEM(logp_fit_rtt_l5_grid); b++)
				for (size_t c = 0; c < 2; c++) {
					l[1] = logp_fit_rtt_l2_grid[a];
					l[4] = logp_fit_rtt_l5_grid[b];
					l[5] = l6s[c];
					logp_fit_linear_init(d, lw, X, y, l);
					logp_fit_lambda_to_u(d->model, l, starts[k++]);
				}
	} else {
		for (size_t a = 0; a < LOGP_FIT_NELEM(logp_fit_ov_l3_grid); a++) {
			l[2] = logp_fit_ov_l3_grid[a];
			logp_fit_linear_init(d, lw, X, y, l);
			logp_fit_lambda_to_u(d->model, l, starts[k++]);
		}
	}
	return k;
}

/* ------------------------------------------------------------- solver ---- */

/* 1 when lambda_j is at (within LOGP_FIT_BOUND_TOL of) a bound. */
static int logp_fit_at_bound(enum ibc_logp_fit_model m, const double *l, int j)
{
	if (j == logp_fit_pole_index(m))
		return l[j] - LOGP_FIT_POLE_MIN <= LOGP_FIT_BOUND_TOL;
	if (logp_fit_is_l5(m, j))
		return 1.0 - fabs(l[j]) / LOGP_FIT_L5_MAX <= LOGP_FIT_BOUND_TOL;
	return 0;
}

static gsl_multifit_nlinear_workspace *logp_fit_ws_alloc(size_t n, size_t npar)
{
	gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();

	fp.trs = gsl_multifit_nlinear_trs_lm;
	return gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, npar);
}

/* Runs the driver (w sized for d's free parameters) from x0, the u of the
 * free parameters; the end point goes to l.  Returns the driver's status,
 * or GSL_EFAILED when it could not start or ended at a non-finite point. */
static int logp_fit_drive(gsl_multifit_nlinear_workspace *w, const struct logp_fit_data *d,
			  const double *x0, double *l)
{
	size_t nfree = 0;
	double xb[IBC_LOGP_FIT_MAXPAR];
	gsl_vector_view xv;
	gsl_multifit_nlinear_fdf fdf;
	int info = 0, st;

	for (int j = 0; j < ibc_logp_fit_npar(d->model); j++)
		nfree += !d->fixed[j];
	xv = gsl_vector_view_array(xb, nfree);
	for (size_t k = 0; k < nfree; k++) {
		xb[k] = x0[k];
		if (!isfinite(xb[k]))
			return GSL_EFAILED;
	}
	memset(&fdf, 0, sizeof(fdf));
	fdf.f = logp_fit_cb_f;
	fdf.df = logp_fit_cb_df;
	fdf.fvv = NULL;
	fdf.n = d->n;
	fdf.p = nfree;
	fdf.params = (void *)d;
	if (gsl_multifit_nlinear_init(&xv.vector, &fdf, w) != GSL_SUCCESS)
		return GSL_EFAILED;
	st = gsl_multifit_nlinear_driver(LOGP_FIT_MAXITER, LOGP_FIT_XTOL, LOGP_FIT_GTOL, 0.0, NULL,
					 NULL, &info, w);
	logp_fit_x_lambda(d, gsl_vector_const_ptr(gsl_multifit_nlinear_position(w), 0), l, NULL);
	for (int j = 0; j < ibc_logp_fit_npar(d->model); j++)
		if (!isfinite(l[j]))
			return GSL_EFAILED;
	return st;
}

/* First-order conditions at l for d's bounds: moving a fixed parameter back
 * inside does not decrease the rss and, with check_free, the residual is
 * orthogonal (cosine <= LOGP_FIT_KKT_TOL) to every free parameter's column. */
static int logp_fit_kkt(const struct logp_fit_data *d, const double *l, int check_free)
{
	enum ibc_logp_fit_model m = d->model;
	int npar = ibc_logp_fit_npar(m);
	double g[IBC_LOGP_FIT_MAXPAR], dot[IBC_LOGP_FIT_MAXPAR] = { 0 };
	double nn[IBC_LOGP_FIT_MAXPAR] = { 0 }, ff = 0.0;

	for (size_t i = 0; i < d->n; i++) {
		double fi = ibc_logp_fit_eval(m, l, d->p[i]) - d->t[i];

		logp_fit_grad(m, l, d->p[i], g);
		ff += fi * fi;
		for (int j = 0; j < npar; j++) {
			dot[j] += g[j] * fi; /* half of d rss / d lambda_j */
			nn[j] += g[j] * g[j];
		}
	}
	if (!isfinite(ff))
		return 0;
	for (int j = 0; j < npar; j++) {
		if (!isfinite(dot[j]) || !isfinite(nn[j]))
			return 0;
		if (d->fixed[j]) {
			/* inside is above a lower bound, below an upper one */
			if ((j == logp_fit_pole_index(m) || d->lfix[j] < 0.0) ? dot[j] < 0.0
									       : dot[j] > 0.0)
				return 0;
		} else if (check_free && fabs(dot[j]) > LOGP_FIT_KKT_TOL * sqrt(nn[j] * ff)) {
			return 0;
		}
	}
	return 1;
}

/* The driver cannot reach a bound in finite steps (u runs to infinity), so
 * a run stopped by the iteration limit or lack of progress with a parameter
 * at a bound is polished: those parameters are set to the bound and the
 * others refitted.  Converged when that run converges (or ends satisfying
 * the first-order conditions) and the bounds are active (logp_fit_kkt). */
static int logp_fit_polish(const struct logp_fit_data *d, double *l)
{
	enum ibc_logp_fit_model m = d->model;
	int npar = ibc_logp_fit_npar(m), nfix = 0, st, ok;
	struct logp_fit_data dp = *d;
	double u[IBC_LOGP_FIT_MAXPAR], x0[IBC_LOGP_FIT_MAXPAR];
	gsl_multifit_nlinear_workspace *w;
	size_t k = 0;

	for (int j = 0; j < npar; j++) {
		if (!logp_fit_at_bound(m, l, j))
			continue;
		dp.fixed[j] = 1;
		dp.lfix[j] = j == logp_fit_pole_index(m) ? LOGP_FIT_POLE_MIN
							  : copysign(LOGP_FIT_L5_MAX, l[j]);
		nfix++;
	}
	if (nfix == 0)
		return 0;
	logp_fit_lambda_to_u(m, l, u);
	for (int j = 0; j < npar; j++)
		if (!dp.fixed[j])
			x0[k++] = u[j];
	w = logp_fit_ws_alloc(d->n, k);
	if (!w)
		return 0;
	st = logp_fit_drive(w, &dp, x0, l);
	gsl_multifit_nlinear_free(w);
	if (st == GSL_SUCCESS)
		ok = logp_fit_kkt(&dp, l, 0);
	else if (st == GSL_EMAXITER || st == GSL_ENOPROG)
		ok = logp_fit_kkt(&dp, l, 1);
	else
		ok = 0;
	return ok;
}

/* One run from the start u0 (every parameter free); 1 when it converged,
 * with the solution in l and its rss. */
static int logp_fit_lm(gsl_multifit_nlinear_workspace *w, const struct logp_fit_data *d,
		       const double *u0, double *l, double *rss)
{
	int st = logp_fit_drive(w, d, u0, l);

	if (st != GSL_SUCCESS) {
		if (st != GSL_EMAXITER && st != GSL_ENOPROG)
			return 0;
		if (!logp_fit_polish(d, l))
			return 0;
	}
	*rss = logp_fit_rss(d->model, l, d->p, d->t, d->n);
	return isfinite(*rss);
}

/* Fits the points of d from the grid (and first from prev, a solution in
 * lambda, when not NULL); the best converged solution goes to best_l,
 * best_rss.  IBC_OK, IBC_ERR_NOTFOUND (not logged) or IBC_ERR_NOMEM
 * (logged). */
static int logp_fit_pass(const struct logp_fit_data *d, const double *prev, double *best_l,
			 double *best_rss, int *nstarts, int *nconv)
{
	int npar = ibc_logp_fit_npar(d->model);
	size_t ncol = d->model == IBC_LOGP_FIT_RTT ? 3 : 2;
	double starts[LOGP_FIT_MAXSTARTS][IBC_LOGP_FIT_MAXPAR];
	gsl_multifit_nlinear_workspace *w = logp_fit_ws_alloc(d->n, (size_t)npar);
	gsl_multifit_linear_workspace *lw = gsl_multifit_linear_alloc(d->n, ncol);
	gsl_matrix *X = gsl_matrix_alloc(d->n, ncol);
	gsl_vector *y = gsl_vector_alloc(d->n);
	int k = 0, found = 0, st = IBC_OK;

	if (!w || !lw || !X || !y) {
		ibc_error("logp fit: out of memory for %zu points", d->n);
		st = IBC_ERR_NOMEM;
		goto out;
	}
	if (prev)
		logp_fit_lambda_to_u(d->model, prev, starts[k++]);
	k += logp_fit_grid(d, lw, X, y, starts + k);

	for (int s = 0; s < k; s++) {
		double l[IBC_LOGP_FIT_MAXPAR], rss;

		(*nstarts)++;
		if (!logp_fit_lm(w, d, starts[s], l, &rss))
			continue;
		(*nconv)++;
		if (!found || rss < *best_rss) {
			found = 1;
			*best_rss = rss;
			memcpy(best_l, l, sizeof(l[0]) * (size_t)npar);
		}
	}
	if (!found)
		st = IBC_ERR_NOTFOUND;
out:
	gsl_vector_free(y);
	gsl_matrix_free(X);
	if (lw)
		gsl_multifit_linear_free(lw);
	if (w)
		gsl_multifit_nlinear_free(w);
	return st;
}

/* Marks outliers in rej (all 0 on entry) from the residuals r of the first
 * fit; returns how many. */
static size_t logp_fit_outliers(int npar, const double *p, const double *r, size_t n,
				unsigned char *rej, double *scratch, size_t *order)
{
	size_t maxrej = n / 10, nrej = 0, distinct;
	double med, mad, thr;
	double *dev = scratch + n; /* scratch holds 2n */
	size_t ncand = 0;

	if (n < (size_t)npar + 3 || maxrej == 0)
		return 0;
	med = logp_fit_median(r, n, scratch);
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(r[i] - med);
	mad = logp_fit_median(dev, n, scratch);
	if (!(mad > 0.0))
		return 0;
	thr = LOGP_FIT_MAD_K * LOGP_FIT_MAD_SCALE * mad;
	for (size_t i = 0; i < n; i++)
		if (dev[i] > thr)
			order[ncand++] = i;
	/* largest deviation first (insertion sort: few candidates) */
	for (size_t a = 1; a < ncand; a++) {
		size_t v = order[a], b = a;

		while (b > 0 && dev[order[b - 1]] < dev[v]) {
			order[b] = order[b - 1];
			b--;
		}
		order[b] = v;
	}
	distinct = logp_fit_distinct_count(p, n, scratch);
	for (size_t c = 0; c < ncand && nrej < maxrej; c++) {
		size_t i = order[c], same = 0;

		for (size_t j = 0; j < n; j++)
			if (!rej[j] && p[j] == p[i])
				same++;
		if (same == 1) {
			if (distinct <= (size_t)npar + 1)
				continue; /* would lose a distinct p below npar + 1 */
			distinct--;
		}
		rej[i] = 1;
		nrej++;
	}
	return nrej;
}

/* identifiable and se for the solution l of the points in d (nothing
 * fixed).  A parameter at a bound gets a zero column: not identifiable. */
static int logp_fit_uncertainty(const struct logp_fit_data *d, const double *l, double rss,
				struct ibc_logp_fit *out)
{
	enum ibc_logp_fit_model m = d->model;
	size_t npar = (size_t)ibc_logp_fit_npar(m), nnull = 0;
	double norm[IBC_LOGP_FIT_MAXPAR], load[IBC_LOGP_FIT_MAXPAR] = { 0 };
	double u[IBC_LOGP_FIT_MAXPAR], emax = 0.0, s2;
	gsl_matrix *J = gsl_matrix_alloc(d->n, npar);
	gsl_matrix *A = gsl_matrix_alloc(npar, npar);
	gsl_matrix *V = gsl_matrix_alloc(npar, npar);
	gsl_matrix *C = gsl_matrix_alloc(npar, npar);
	gsl_vector *ev = gsl_vector_alloc(npar);
	gsl_eigen_symmv_workspace *ew = gsl_eigen_symmv_alloc(npar);
	int st = IBC_OK;

	for (size_t j = 0; j < npar; j++)
		out->se[j] = NAN;
	out->identifiable = 0;
	if (!J || !A || !V || !C || !ev || !ew) {
		ibc_error("logp fit: out of memory for the covariance");
		st = IBC_ERR_NOMEM;
		goto out;
	}
	logp_fit_lambda_to_u(m, l, u);
	logp_fit_jac_fill(d, u, J);
	for (size_t j = 0; j < npar; j++) {
		gsl_vector_view col = gsl_matrix_column(J, j);

		norm[j] = gsl_blas_dnrm2(&col.vector);
		if (norm[j] > 0.0 && isfinite(norm[j]) && !logp_fit_at_bound(m, l, (int)j)) {
			gsl_vector_scale(&col.vector, 1.0 / norm[j]);
		} else {
			norm[j] = 0.0;
			gsl_vector_set_zero(&col.vector);
		}
	}
	gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, J, J, 0.0, A);
	if (gsl_eigen_symmv(A, ev, V, ew) != GSL_SUCCESS)
		goto out; /* leave se NAN, identifiable 0 */
	for (size_t k = 0; k < npar; k++)
		emax = fmax(emax, gsl_vector_get(ev, k));
	for (size_t k = 0; k < npar; k++) {
		if (emax > 0.0 && gsl_vector_get(ev, k) > LOGP_FIT_RANK_TOL * emax)
			continue;
		nnull++;
		for (size_t j = 0; j < npar; j++) {
			double v = gsl_matrix_get(V, j, k);

			load[j] += v * v;
		}
	}
	out->identifiable = nnull == 0;

	if (gsl_multifit_nlinear_covar(J, LOGP_FIT_COVAR_TOL, C) != GSL_SUCCESS)
		goto out;
	s2 = rss / (double)(d->n - npar);
	for (size_t j = 0; j < npar; j++) {
		double cjj, se;

		if (load[j] > LOGP_FIT_LOAD_TOL || !(norm[j] > 0.0))
			continue;
		cjj = gsl_matrix_get(C, j, j) / (norm[j] * norm[j]);
		if (!(cjj > 0.0))
			continue;
		se = sqrt(s2 * cjj) * fabs(logp_fit_dlambda_du(m, u, (int)j));
		if (isfinite(se))
			out->se[j] = se;
	}
out:
	if (ew)
		gsl_eigen_symmv_free(ew);
	gsl_vector_free(ev);
	gsl_matrix_free(C);
	gsl_matrix_free(V);
	gsl_matrix_free(A);
	gsl_matrix_free(J);
	return st;
}

static void logp_fit_placeholder(enum ibc_logp_fit_model m, size_t n, struct ibc_logp_fit *out)
{
	memset(out, 0, sizeof(*out));
	out->model = m;
	out->npar = ibc_logp_fit_npar(m);
	out->n = n;
	for (int j = 0; j < IBC_LOGP_FIT_MAXPAR; j++)
		out->se[j] = NAN;
	snprintf(out->rule, sizeof(out->rule), "%s", logp_fit_rule_text);
}

static int logp_fit_check(enum ibc_logp_fit_model m, const double *p, const double *t, size_t n,
			  const struct ibc_logp_fit *out)
{
	if (!out || ibc_logp_fit_npar(m) == 0) {
		ibc_error("logp fit: %s", out ? "unknown model" : "no result struct");
		return IBC_ERR_INVAL;
	}
	if (n == 0 || !p || !t) {
		ibc_error("logp fit (%s): no points", ibc_logp_fit_model_name(m));
		return IBC_ERR_INVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(p[i]) || !isfinite(t[i]) || p[i] < 1.0) {
			ibc_error("logp fit (%s): point %zu of %zu is bad (p %g, t %g): need finite "
				  "values and p >= 1",
				  ibc_logp_fit_model_name(m), i, n, p[i], t[i]);
			return IBC_ERR_INVAL;
		}
	}
	return IBC_OK;
}

int ibc_logp_fit_run(enum ibc_logp_fit_model m, const double *p, const double *t, size_t n,
		     struct ibc_logp_fit *out, unsigned char *rejected, double *resid)
{
	int npar = ibc_logp_fit_npar(m), st, nstarts = 0, nconv = 0;
	double l[IBC_LOGP_FIT_MAXPAR], l2[IBC_LOGP_FIT_MAXPAR];
	double rss = 0.0, rss2 = 0.0, *scratch = NULL, *r = NULL, *pk = NULL, *tk = NULL;
	double mean = 0.0, tss = 0.0;
	unsigned char *rej = NULL;
	size_t *order = NULL;
	struct logp_fit_data d;
	gsl_error_handler_t *prev_handler = NULL;

	st = logp_fit_check(m, p, t, n, out);
	if (st != IBC_OK)
		return st;
	logp_fit_placeholder(m, n, out);

	scratch = malloc(2 * n * sizeof(*scratch));
	r = malloc(n * sizeof(*r));
	pk = malloc(n * sizeof(*pk));
	tk = malloc(n * sizeof(*tk));
	rej = calloc(n, 1);
	order = malloc(n * sizeof(*order));
	if (!scratch || !r || !pk || !tk || !rej || !order) {
		ibc_error("logp fit: out of memory for %zu points", n);
		st = IBC_ERR_NOMEM;
		goto free_out;
	}
	if (logp_fit_distinct_count(p, n, scratch) < (size_t)npar + 1) {
		st = IBC_ERR_UNSUPPORTED;
		goto free_out;
	}

	prev_handler = gsl_set_error_handler_off();

	memset(&d, 0, sizeof(d));
	d.model = m;
	d.p = p;
	d.t = t;
	d.n = n;
	st = logp_fit_pass(&d, NULL, l, &rss, &nstarts, &nconv);
	/* IBC_ERR_NOTFOUND is a result (out->starts, out->converged say it),
	 * not an error of the program: the caller reports it */
	if (st != IBC_OK)
		goto restore;

	for (size_t i = 0; i < n; i++)
		r[i] = t[i] - ibc_logp_fit_eval(m, l, p[i]);
	if (logp_fit_outliers(npar, p, r, n, rej, scratch, order) > 0) {
		size_t nk = 0;

		for (size_t i = 0; i < n; i++) {
			if (rej[i])
				continue;
			pk[nk] = p[i];
			tk[nk] = t[i];
			nk++;
		}
		d.p = pk;
		d.t = tk;
		d.n = nk;
		st = logp_fit_pass(&d, l, l2, &rss2, &nstarts, &nconv);
		if (st == IBC_OK) {
			memcpy(l, l2, sizeof(l));
			rss = rss2;
		} else if (st == IBC_ERR_NOTFOUND) {
			/* keep the first fit, with every point */
			memset(rej, 0, n);
			d.p = p;
			d.t = t;
			d.n = n;
			st = IBC_OK;
		} else {
			goto restore;
		}
	}

	st = logp_fit_uncertainty(&d, l, rss, out);
	if (st != IBC_OK)
		goto restore;
	for (size_t i = 0; i < d.n; i++)
		mean += d.t[i];
	mean /= (double)d.n;
	for (size_t i = 0; i < d.n; i++)
		tss += (d.t[i] - mean) * (d.t[i] - mean);
	memcpy(out->lambda, l, sizeof(l[0]) * (size_t)npar);
	out->rss = rss;
	out->rmse = sqrt(rss / (double)d.n);
	if (tss > 0.0)
		out->r2 = 1.0 - rss / tss;
	else
		out->r2 = rss == 0.0 ? 1.0 : 0.0;
	out->nkept = d.n;
	out->starts = nstarts;
	out->converged = nconv;
	for (size_t i = 0; i < n; i++) {
		if (rejected)
			rejected[i] = rej[i];
		if (resid)
			resid[i] = t[i] - ibc_logp_fit_eval(m, l, p[i]);
	}

restore:
	gsl_set_error_handler(prev_handler);
free_out:
	if (st != IBC_OK && st != IBC_ERR_UNSUPPORTED) {
		logp_fit_placeholder(m, n, out);
		out->starts = nstarts;
		out->converged = nconv;
	}
	free(order);
	free(rej);
	free(tk);
	free(pk);
	free(r);
	free(scratch);
	return st;
}
