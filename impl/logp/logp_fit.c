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

#include <float.h>
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
#define LOGP_FIT_BOUND_TOL 1e-6  /* pole - its minimum, 1 - |l5|/5, a time (us): "at the bound" */
#define LOGP_FIT_NONNEG_START 1e-4 /* a time starts at this much at least (u = 0 is stationary) */
#define LOGP_FIT_T_MIN 2.0      /* identifiable: |lambda| >= this many se */
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
	unsigned char fixed[IBC_LOGP_FIT_MAXPAR]; /* by the form or at a bound */
	unsigned char bound[IBC_LOGP_FIT_MAXPAR]; /* fixed at a bound by the polish */
	unsigned char nonneg[IBC_LOGP_FIT_MAXPAR]; /* a time: lambda = u^2 >= 0 */
	double lfix[IBC_LOGP_FIT_MAXPAR];
};

/* The paper's forms and their reductions: which parameters a form holds,
 * at which value (a term that vanishes, or l6 = 0, which loses nothing:
 * l3 + l4 (1 - e^(l5 (p - l6))) spans the same curves for any l6). */
struct logp_fit_form {
	const char *name;
	enum ibc_logp_fit_model model;
	unsigned char fixed[IBC_LOGP_FIT_MAXPAR];
	unsigned char nonneg[IBC_LOGP_FIT_MAXPAR]; /* times: the pipeline's l1, l3 as
						     * processing (not where l6 = 0 folds
						     * l4 (1 - e^(-l5 l6)) into it), ov's l1 */
};

static const struct logp_fit_form logp_fit_forms[] = {
	{ "rtt6", IBC_LOGP_FIT_RTT, { 0, 0, 0, 0, 0, 0 }, { 1, 0, 1 } },  /* the paper's */
	{ "rtt5", IBC_LOGP_FIT_RTT, { 0, 0, 0, 0, 0, 1 }, { 1, 0, 0 } },  /* l6 = 0 */
	{ "rtt4", IBC_LOGP_FIT_RTT, { 0, 1, 0, 0, 0, 1 }, { 1, 0, 0 } },  /* l2 = 0, l6 = 0 */
	{ "rtt3p", IBC_LOGP_FIT_RTT, { 0, 0, 0, 1, 1, 1 }, { 1, 0, 1 } }, /* pipeline + processing */
	{ "rtt3s", IBC_LOGP_FIT_RTT, { 1, 1, 0, 0, 0, 1 }, { 0, 0, 0 } }, /* processing + saturation */
	{ "rtt2", IBC_LOGP_FIT_RTT, { 0, 1, 0, 1, 1, 1 }, { 1, 0, 1 } },  /* l1/p + l3 */
	{ "rtt1", IBC_LOGP_FIT_RTT, { 1, 1, 0, 1, 1, 1 }, { 0, 0, 1 } },  /* l3 */
	{ "ov3", IBC_LOGP_FIT_OV, { 0, 0, 0 }, { 1, 0, 0 } },             /* the paper's */
	{ "ov2", IBC_LOGP_FIT_OV, { 0, 0, 1 }, { 1, 0, 0 } },             /* l1 + l2/p */
	{ "ov1", IBC_LOGP_FIT_OV, { 0, 1, 1 }, { 1, 0, 0 } },             /* l1 */
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

/* a time, >= 0 (the form says which: struct logp_fit_form); lambda = u^2 */
static int logp_fit_is_nonneg(const struct logp_fit_data *d, int j)
{
	return d->nonneg[j];
}

static void logp_fit_u_to_lambda(const struct logp_fit_data *d, const double *u, double *l)
{
	enum ibc_logp_fit_model m = d->model;
	int npar = ibc_logp_fit_npar(m);

	for (int j = 0; j < npar; j++) {
		if (j == logp_fit_pole_index(m))
			l[j] = LOGP_FIT_POLE_MIN + exp(u[j]);
		else if (logp_fit_is_l5(m, j))
			l[j] = LOGP_FIT_L5_MAX * tanh(u[j]);
		else if (logp_fit_is_nonneg(d, j))
			l[j] = u[j] * u[j];
		else
			l[j] = u[j];
	}
}

static void logp_fit_lambda_to_u(const struct logp_fit_data *d, const double *l, double *u)
{
	enum ibc_logp_fit_model m = d->model;
	int npar = ibc_logp_fit_npar(m);

	for (int j = 0; j < npar; j++) {
		if (j == logp_fit_pole_index(m)) {
			u[j] = log(fmax(l[j] - LOGP_FIT_POLE_MIN, 1e-12));
		} else if (logp_fit_is_l5(m, j)) {
			double x = l[j] / LOGP_FIT_L5_MAX;

			x = fmin(fmax(x, -1.0 + 1e-12), 1.0 - 1e-12);
			u[j] = atanh(x);
		} else if (logp_fit_is_nonneg(d, j)) {
			u[j] = sqrt(fmax(l[j], LOGP_FIT_NONNEG_START));
		} else {
			u[j] = l[j];
		}
	}
}

/* d lambda_j / d u_j */
static double logp_fit_dlambda_du(const struct logp_fit_data *d, const double *u, int j)
{
	enum ibc_logp_fit_model m = d->model;

	if (j == logp_fit_pole_index(m))
		return exp(u[j]);
	if (logp_fit_is_l5(m, j)) {
		double th = tanh(u[j]);

		return LOGP_FIT_L5_MAX * (1.0 - th * th);
	}
	if (logp_fit_is_nonneg(d, j))
		return 2.0 * u[j];
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
	logp_fit_u_to_lambda(d, u, l);
	for (int j = 0; j < npar; j++) {
		if (d->fixed[j])
			l[j] = d->lfix[j];
		if (du)
			du[j] = d->fixed[j] ? 0.0 : logp_fit_dlambda_du(d, u, j);
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

/* The parameters the model is linear in: rtt l1, l3, l4; ov l1, l2. */
static int logp_fit_is_linear(enum ibc_logp_fit_model m, int j)
{
	return m == IBC_LOGP_FIT_RTT ? j == 0 || j == 2 || j == 3 : j == 0 || j == 1;
}

/* The basis function of linear parameter j at p, for the nonlinear ones in l. */
static double logp_fit_basis(enum ibc_logp_fit_model m, const double *l, int j, double p)
{
	if (m == IBC_LOGP_FIT_RTT)
		return j == 0 ? 1.0 / (l[1] + p) : j == 2 ? 1.0 : 1.0 - exp(l[4] * (p - l[5]));
	return j == 0 ? 1.0 : 1.0 / (l[2] + p);
}

/* Least-squares values of the free parameters the model is linear in, for
 * the nonlinear ones already in l (the fixed ones are 0).  Falls back to a
 * rough guess from the data. */
static void logp_fit_linear_init(const struct logp_fit_data *d, gsl_multifit_linear_workspace *lw,
				 gsl_matrix *X, gsl_vector *y, double *l)
{
	enum ibc_logp_fit_model m = d->model;
	int npar = ibc_logp_fit_npar(m), lin[3], ncol = 0, j, k;
	double c_buf[3], cov_buf[9], chisq = 0.0, tmin = d->t[0], pmin = d->p[0], tpmin = d->t[0];
	gsl_vector_view c;
	gsl_matrix_view cov, Xv;
	size_t rank = 0;
	int ok;

	for (j = 0; j < npar; j++)
		if (!d->fixed[j] && logp_fit_is_linear(m, j) && ncol < 3)
			lin[ncol++] = j;
	for (j = 0; j < npar; j++)
		if (d->fixed[j])
			l[j] = d->lfix[j];
	for (size_t i = 0; i < d->n; i++) {
		double p = d->p[i];

		for (k = 0; k < ncol; k++)
			gsl_matrix_set(X, i, (size_t)k, logp_fit_basis(m, l, lin[k], p));
		gsl_vector_set(y, i, d->t[i]);
		if (d->t[i] < tmin)
			tmin = d->t[i];
		if (p < pmin || (p == pmin && d->t[i] < tpmin)) {
			pmin = p;
			tpmin = d->t[i];
		}
	}
	ok = ncol > 0;
	if (ok) {
		c = gsl_vector_view_array(c_buf, (size_t)ncol);
		cov = gsl_matrix_view_array(cov_buf, (size_t)ncol, (size_t)ncol);
		Xv = gsl_matrix_submatrix(X, 0, 0, d->n, (size_t)ncol);
		ok = gsl_multifit_linear_tsvd(&Xv.matrix, y, 1e-12, &c.vector, &cov.matrix, &chisq,
					      &rank, lw) == GSL_SUCCESS;
	}
	for (k = 0; ok && k < ncol; k++)
		ok = isfinite(c_buf[k]);
	for (k = 0; k < ncol; k++) {
		j = lin[k];
		if (ok)
			l[j] = c_buf[k];
		else if (m == IBC_LOGP_FIT_OV ? j == 0 : j == 2)
			l[j] = tmin; /* the constant */
		else if (m == IBC_LOGP_FIT_RTT ? j == 0 : j == 1)
			l[j] = (tpmin - tmin) * (l[m == IBC_LOGP_FIT_RTT ? 1 : 2] + pmin);
		else
			l[j] = 0.0;
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

		for (size_t a = 0; a < (d->fixed[1] ? 1 : LOGP_FIT_NELEM(logp_fit_rtt_l2_grid)); a++)
			for (size_t b = 0; b < (d->fixed[4] ? 1 : LOGP_FIT_NELEM(logp_fit_rtt_l5_grid)); b++)
				for (size_t c = 0; c < (d->fixed[5] ? 1u : 2u); c++) {
					l[1] = logp_fit_rtt_l2_grid[a];
					l[4] = logp_fit_rtt_l5_grid[b];
					l[5] = l6s[c];
					logp_fit_linear_init(d, lw, X, y, l);
					logp_fit_lambda_to_u(d, l, starts[k++]);
				}
	} else {
		for (size_t a = 0; a < (d->fixed[2] ? 1 : LOGP_FIT_NELEM(logp_fit_ov_l3_grid)); a++) {
			l[2] = logp_fit_ov_l3_grid[a];
			logp_fit_linear_init(d, lw, X, y, l);
			logp_fit_lambda_to_u(d, l, starts[k++]);
		}
	}
	return k;
}

/* ------------------------------------------------------------- solver ---- */

/* 1 when lambda_j is at (within LOGP_FIT_BOUND_TOL of) a bound. */
static int logp_fit_at_bound(const struct logp_fit_data *d, const double *l, int j)
{
	enum ibc_logp_fit_model m = d->model;

	if (j == logp_fit_pole_index(m))
		return l[j] - LOGP_FIT_POLE_MIN <= LOGP_FIT_BOUND_TOL;
	if (logp_fit_is_l5(m, j))
		return 1.0 - fabs(l[j]) / LOGP_FIT_L5_MAX <= LOGP_FIT_BOUND_TOL;
	if (logp_fit_is_nonneg(d, j))
		return l[j] <= LOGP_FIT_BOUND_TOL;
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
		if (d->bound[j]) {
			/* inside is above a lower bound, below an upper one */
			if ((j == logp_fit_pole_index(m) || logp_fit_is_nonneg(d, j) ||
			     d->lfix[j] < 0.0) ? dot[j] < 0.0 : dot[j] > 0.0)
				return 0;
		} else if (d->fixed[j]) {
			continue;
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
		if (d->fixed[j] || !logp_fit_at_bound(d, l, j))
			continue;
		dp.fixed[j] = 1;
		dp.bound[j] = 1;
		dp.lfix[j] = j == logp_fit_pole_index(m) ? LOGP_FIT_POLE_MIN
			     : logp_fit_is_l5(m, j)      ? copysign(LOGP_FIT_L5_MAX, l[j])
							 : 0.0;
		nfix++;
	}
	if (nfix == 0) /* stopped inside: a solution when the gradient vanishes */
		return logp_fit_kkt(d, l, 1);
	logp_fit_lambda_to_u(d, l, u);
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
	double x0[IBC_LOGP_FIT_MAXPAR];
	int k = 0, st;

	for (int j = 0; j < ibc_logp_fit_npar(d->model); j++)
		if (!d->fixed[j])
			x0[k++] = u0[j];
	st = logp_fit_drive(w, d, x0, l);

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
	size_t ncol = d->model == IBC_LOGP_FIT_RTT ? 3 : 2, nfree = 0;
	double starts[LOGP_FIT_MAXSTARTS][IBC_LOGP_FIT_MAXPAR];
	gsl_multifit_nlinear_workspace *w;

	for (int j = 0; j < npar; j++)
		nfree += !d->fixed[j];
	w = logp_fit_ws_alloc(d->n, nfree);
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
		logp_fit_lambda_to_u(d, prev, starts[k++]);
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
	size_t npar = (size_t)ibc_logp_fit_npar(m), nnull = 0, nf = 0, k;
	double norm[IBC_LOGP_FIT_MAXPAR], load[IBC_LOGP_FIT_MAXPAR] = { 0 };
	double u[IBC_LOGP_FIT_MAXPAR], x[IBC_LOGP_FIT_MAXPAR], emax = 0.0, s2;
	int idx[IBC_LOGP_FIT_MAXPAR]; /* column k is parameter idx[k] */
	gsl_matrix *J = NULL, *A = NULL, *V = NULL, *C = NULL;
	gsl_vector *ev = NULL;
	gsl_eigen_symmv_workspace *ew = NULL;
	int st = IBC_OK;

	for (size_t j = 0; j < npar; j++)
		out->se[j] = NAN;
	out->identifiable = 0;
	logp_fit_lambda_to_u(d, l, u);
	for (size_t j = 0; j < npar; j++)
		if (!d->fixed[j]) {
			idx[nf] = (int)j;
			x[nf++] = u[j];
		}
	J = gsl_matrix_alloc(d->n, nf);
	A = gsl_matrix_alloc(nf, nf);
	V = gsl_matrix_alloc(nf, nf);
	C = gsl_matrix_alloc(nf, nf);
	ev = gsl_vector_alloc(nf);
	ew = gsl_eigen_symmv_alloc(nf);
	if (!J || !A || !V || !C || !ev || !ew) {
		ibc_error("logp fit: out of memory for the covariance");
		st = IBC_ERR_NOMEM;
		goto out;
	}
	logp_fit_jac_fill(d, x, J);
	for (k = 0; k < nf; k++) {
		gsl_vector_view col = gsl_matrix_column(J, k);

		norm[k] = gsl_blas_dnrm2(&col.vector);
		if (norm[k] > 0.0 && isfinite(norm[k]) && !logp_fit_at_bound(d, l, idx[k])) {
			gsl_vector_scale(&col.vector, 1.0 / norm[k]);
		} else {
			norm[k] = 0.0;
			gsl_vector_set_zero(&col.vector);
		}
	}
	gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, J, J, 0.0, A);
	if (gsl_eigen_symmv(A, ev, V, ew) != GSL_SUCCESS)
		goto out; /* leave se NAN, identifiable 0 */
	for (k = 0; k < nf; k++)
		emax = fmax(emax, gsl_vector_get(ev, k));
	for (k = 0; k < nf; k++) {
		if (emax > 0.0 && gsl_vector_get(ev, k) > LOGP_FIT_RANK_TOL * emax)
			continue;
		nnull++;
		for (size_t j = 0; j < nf; j++) {
			double v = gsl_matrix_get(V, j, k);

			load[j] += v * v;
		}
	}
	out->identifiable = nnull == 0;

	if (gsl_multifit_nlinear_covar(J, LOGP_FIT_COVAR_TOL, C) != GSL_SUCCESS)
		goto out;
	s2 = d->n > nf ? rss / (double)(d->n - nf) : NAN;
	for (k = 0; k < nf; k++) {
		int j = idx[k];
		double cjj, se;

		if (load[k] > LOGP_FIT_LOAD_TOL || !(norm[k] > 0.0))
			continue;
		cjj = gsl_matrix_get(C, k, k) / (norm[k] * norm[k]);
		if (!(cjj >= 0.0))
			continue;
		se = sqrt(s2 * cjj) * fabs(logp_fit_dlambda_du(d, u, j));
		if (isfinite(se))
			out->se[j] = se;
	}
	/* determined: every free parameter has an se, and the data tell it
	 * from 0 (|lambda| >= LOGP_FIT_T_MIN se) */
	for (k = 0; k < nf && out->identifiable; k++) {
		int j = idx[k];

		if (!isfinite(out->se[j]) || fabs(l[j]) < LOGP_FIT_T_MIN * out->se[j])
			out->identifiable = 0;
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

/* rss with a floor (a relative noise of 1e-9), so that exact fits compare
 * by their number of parameters */
static double logp_fit_aicc(const double *t, size_t n, double rss, int nfree)
{
	double mean = 0.0, k = nfree + 1.0; /* the parameters and the variance */

	for (size_t i = 0; i < n; i++)
		mean += fabs(t[i]);
	mean /= (double)n;
	rss = fmax(rss, (double)n * (1e-9 * mean) * (1e-9 * mean) + DBL_MIN);
	if ((double)n <= k + 1.0)
		return NAN;
	return (double)n * log(rss / (double)n) + 2.0 * k + 2.0 * k * (k + 1.0) / ((double)n - k - 1.0);
}

/* 1 when the curve is > 0 at every integer p from 1 to the largest p */
static int logp_fit_positive(enum ibc_logp_fit_model m, const double *l, const double *p, size_t n)
{
	double pmax = 1.0;

	for (size_t i = 0; i < n; i++)
		pmax = fmax(pmax, p[i]);
	for (double q = 1.0; q <= pmax; q += 1.0)
		if (!(ibc_logp_fit_eval(m, l, q) > 0.0))
			return 0;
	return 1;
}

/* Fits form fm to the points not in rej (NULL: all), from prev (lambda, may
 * be NULL) and the grid, into out (already a placeholder).  pk, tk: n
 * doubles of scratch.  IBC_OK; IBC_ERR_UNSUPPORTED when fewer than nfree + 1
 * distinct p; IBC_ERR_NOTFOUND when no start converged; IBC_ERR_NOMEM. */
static int logp_fit_form_run(const struct logp_fit_form *fm, const double *p, const double *t,
			     size_t n, const unsigned char *rej, const double *prev, double *pk,
			     double *tk, double *scratch, struct ibc_logp_fit *out)
{
	enum ibc_logp_fit_model m = fm->model;
	int npar = ibc_logp_fit_npar(m), nfree = 0, st;
	double l[IBC_LOGP_FIT_MAXPAR], rss = 0.0, mean = 0.0, tss = 0.0;
	struct logp_fit_data d;
	size_t nk = 0;

	memset(&d, 0, sizeof(d));
	for (int j = 0; j < npar; j++) {
		d.fixed[j] = fm->fixed[j];
		d.nonneg[j] = fm->nonneg[j];
		nfree += !fm->fixed[j];
	}
	for (size_t i = 0; i < n; i++) {
		if (rej && rej[i])
			continue;
		pk[nk] = p[i];
		tk[nk++] = t[i];
	}
	snprintf(out->form, sizeof(out->form), "%s", fm->name);
	out->nfree = nfree;
	out->aicc = NAN;
	if (logp_fit_distinct_count(pk, nk, scratch) < (size_t)nfree + 1)
		return IBC_ERR_UNSUPPORTED;
	d.model = m;
	d.p = pk;
	d.t = tk;
	d.n = nk;
	st = logp_fit_pass(&d, prev, l, &rss, &out->starts, &out->converged);
	if (st != IBC_OK)
		return st;
	st = logp_fit_uncertainty(&d, l, rss, out);
	if (st != IBC_OK)
		return st;
	for (size_t i = 0; i < nk; i++)
		mean += tk[i];
	mean /= (double)nk;
	for (size_t i = 0; i < nk; i++)
		tss += (tk[i] - mean) * (tk[i] - mean);
	memcpy(out->lambda, l, sizeof(l[0]) * (size_t)npar);
	out->rss = rss;
	out->rmse = sqrt(rss / (double)nk);
	if (tss > 0.0)
		out->r2 = 1.0 - rss / tss;
	else
		out->r2 = rss == 0.0 ? 1.0 : 0.0;
	out->nkept = nk;
	out->aicc = logp_fit_aicc(tk, nk, rss, nfree);
	out->positive = logp_fit_positive(m, l, pk, nk);
	return IBC_OK;
}

/* The candidate to prefer: converged, then (when want_use) identifiable and
 * positive, then the smallest AICc (a NAN AICc last), then fewer parameters. */
static int logp_fit_better(const struct ibc_logp_fit *a, int arc, const struct ibc_logp_fit *b,
			   int brc, int want_use)
{
	double aa = isfinite(a->aicc) ? a->aicc : INFINITY, ab = isfinite(b->aicc) ? b->aicc : INFINITY;

	if ((arc == IBC_OK) != (brc == IBC_OK))
		return arc == IBC_OK;
	if (want_use) {
		int ua = a->identifiable && a->positive && isfinite(a->aicc);
		int ub = b->identifiable && b->positive && isfinite(b->aicc);

		if (ua != ub)
			return ua;
	}
	if (aa != ab)
		return aa < ab;
	return a->nfree < b->nfree;
}

static void logp_fit_cands_fmt(const struct ibc_logp_fit *c, const int *crc, size_t nc, char *b,
			       size_t cap)
{
	size_t used = 0;

	b[0] = '\0';
	for (size_t f = 0; f < nc && used + 48 < cap; f++) {
		const char *why = crc[f] == IBC_ERR_UNSUPPORTED ? "too few p"
				  : crc[f] != IBC_OK		 ? "no convergence"
				  : !c[f].identifiable		 ? "not identifiable"
				  : !c[f].positive		 ? "curve <= 0"
				  : !isfinite(c[f].aicc)	 ? "too few points for AICc"
								 : "ok";

		if (crc[f] == IBC_OK && isfinite(c[f].aicc))
			used += (size_t)snprintf(b + used, cap - used, "%s%s:%.4g:%s", used ? ";" : "",
						 c[f].form, c[f].aicc, why);
		else
			used += (size_t)snprintf(b + used, cap - used, "%s%s:-:%s", used ? ";" : "",
						 c[f].form, why);
	}
}

/* The forms of m (only: that one form) fitted, outliers rejected by the
 * best of them, refitted, and the best chosen (logp_fit.h). */
static int logp_fit_choose(enum ibc_logp_fit_model m, const char *only, const double *p,
			   const double *t, size_t n, struct ibc_logp_fit *out,
			   unsigned char *rejected, double *resid)
{
	struct ibc_logp_fit cand[LOGP_FIT_NELEM(logp_fit_forms)], tmp;
	int crc[LOGP_FIT_NELEM(logp_fit_forms)] = { 0 };
	const struct logp_fit_form *fms[LOGP_FIT_NELEM(logp_fit_forms)];
	double *scratch = NULL, *r = NULL, *pk = NULL, *tk = NULL;
	unsigned char *rej = NULL;
	size_t *order = NULL, nf = 0, f, best = 0;
	int st = IBC_OK, any_ok = 0, any_fit = 0;
	gsl_error_handler_t *prev_handler = NULL;

	st = logp_fit_check(m, p, t, n, out);
	if (st != IBC_OK)
		return st;
	logp_fit_placeholder(m, n, out);
	for (f = 0; f < LOGP_FIT_NELEM(logp_fit_forms); f++)
		if (logp_fit_forms[f].model == m && (!only || strcmp(only, logp_fit_forms[f].name) == 0))
			fms[nf++] = &logp_fit_forms[f];
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
	prev_handler = gsl_set_error_handler_off();

	for (f = 0; f < nf; f++) {
		logp_fit_placeholder(m, n, &cand[f]);
		crc[f] = logp_fit_form_run(fms[f], p, t, n, NULL, NULL, pk, tk, scratch, &cand[f]);
		if (crc[f] == IBC_ERR_NOMEM) {
			st = crc[f];
			goto restore;
		}
		if (f == 0 || logp_fit_better(&cand[f], crc[f], &cand[best], crc[best], 0))
			best = f;
		any_fit |= crc[f] != IBC_ERR_UNSUPPORTED;
	}
	if (crc[best] != IBC_OK) {
		/* IBC_ERR_NOTFOUND is a result (starts, converged say it), not an
		 * error of the program: the caller reports it */
		st = any_fit ? IBC_ERR_NOTFOUND : IBC_ERR_UNSUPPORTED;
		out->starts = cand[best].starts;
		out->converged = cand[best].converged;
		goto restore;
	}
	/* outliers by the residuals of the best first fit, then every form again */
	for (size_t i = 0; i < n; i++)
		r[i] = t[i] - ibc_logp_fit_eval(m, cand[best].lambda, p[i]);
	if (logp_fit_outliers(cand[best].nfree, p, r, n, rej, scratch, order) > 0) {
		struct ibc_logp_fit again[LOGP_FIT_NELEM(logp_fit_forms)];
		int arc[LOGP_FIT_NELEM(logp_fit_forms)];

		for (f = 0; f < nf; f++) {
			again[f] = cand[f];
			arc[f] = logp_fit_form_run(fms[f], p, t, n, rej, crc[f] == IBC_OK ? cand[f].lambda
											 : NULL,
						   pk, tk, scratch, &again[f]);
			if (arc[f] == IBC_ERR_NOMEM) {
				st = arc[f];
				goto restore;
			}
			any_ok |= arc[f] == IBC_OK;
		}
		if (any_ok) {
			memcpy(cand, again, sizeof(cand));
			memcpy(crc, arc, sizeof(crc));
		} else {
			memset(rej, 0, n); /* keep the first fits, with every point */
		}
	}
	for (f = 0; f < nf; f++)
		if (f == 0 || logp_fit_better(&cand[f], crc[f], &cand[best], crc[best], 1))
			best = f;
	tmp = cand[best];
	logp_fit_cands_fmt(cand, crc, nf, tmp.cands, sizeof(tmp.cands));
	*out = tmp;
	for (size_t i = 0; i < n; i++) {
		if (rejected)
			rejected[i] = rej[i];
		if (resid)
			resid[i] = t[i] - ibc_logp_fit_eval(m, out->lambda, p[i]);
	}
restore:
	gsl_set_error_handler(prev_handler);
free_out:
	if (st != IBC_OK && st != IBC_ERR_UNSUPPORTED) {
		int s = out->starts, c = out->converged;

		logp_fit_placeholder(m, n, out);
		out->starts = s;
		out->converged = c;
	}
	free(order);
	free(rej);
	free(tk);
	free(pk);
	free(r);
	free(scratch);
	return st;
}

int ibc_logp_fit_usable(const struct ibc_logp_fit *f)
{
	return f->identifiable && f->positive && isfinite(f->aicc);
}

int ibc_logp_fit_run(enum ibc_logp_fit_model m, const double *p, const double *t, size_t n,
		     struct ibc_logp_fit *out, unsigned char *rejected, double *resid)
{
	return logp_fit_choose(m, m == IBC_LOGP_FIT_RTT ? "rtt6" : "ov3", p, t, n, out, rejected,
			       resid);
}

int ibc_logp_fit_select(enum ibc_logp_fit_model m, const double *p, const double *t, size_t n,
			struct ibc_logp_fit *out, unsigned char *rejected, double *resid)
{
	return logp_fit_choose(m, NULL, p, t, n, out, rejected, resid);
}
