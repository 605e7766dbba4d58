/* Least-squares fits of the LoP communication model (Hoefler & Rehm, "A
 * Communication Model for Small Messages with InfiniBand", section 3) as a
 * function of p, the number of peers (p >= 1):
 *
 *   rtt (6 parameters): t(p) = l1/(l2 + p) + l3 + l4*(1 - exp(l5*(p - l6)))
 *   ov  (3 parameters): t(p) = l1 + l2/(l3 + p)
 *
 * Method:
 *   - Nonlinear least squares with GSL's gsl_multifit_nlinear, trust region
 *     with Levenberg-Marquardt steps (gsl_multifit_nlinear_trs_lm, default
 *     scaling and QR solver), analytic Jacobian.  A start has converged
 *     when the driver reports success (xtol 1e-10, gtol 1e-10, at most 400
 *     iterations) at a finite point, or when it stopped (iteration limit, no
 *     progress) with a parameter at a bound and passes the polish below.
 *   - Bounds by reparametrisation: the solver works on u, not lambda.  The
 *     pole parameter (l2 of rtt, l3 of ov) is -1 + 1e-6 + exp(u), so that
 *     pole + p > 0 for every p >= 1; rtt's l5 is 5*tanh(u), in (-5, 5); the
 *     other parameters are free (lambda = u).  A bound is reached only as u
 *     runs to infinity, so a run that stops with a parameter within 1e-6 of
 *     its bound (pole - (-1 + 1e-6), or 1 - |l5|/5) is polished: those
 *     parameters are set to the bound, the others refitted, and the result
 *     is accepted when that refit converges (or ends with the residual
 *     orthogonal to each free parameter's Jacobian column within a cosine of
 *     1e-5) and moving a bound parameter back inside would not decrease the
 *     rss (first-order conditions of the bounded problem).
 *   - Several starts, keeping the converged solution with the smallest
 *     residual sum of squares.  rtt: a grid l2 in {-0.5, 0, 1, 4} x
 *     l5 in {-1, -0.1, -0.01, 0.01, 0.1} x l6 in {min p, max p} (40 starts);
 *     ov: l3 in {-0.9, -0.5, 0, 1, 4, 16, 64, 256} (8 starts).  For each grid point
 *     the parameters the model is linear in (rtt: l1, l3, l4; ov: l1, l2)
 *     start at their linear least-squares values for the data (truncated
 *     SVD), or at l3 = min t, l1 = (t(min p) - l3)*(pole + min p) when that
 *     fails.  starts and converged count the runs of both passes.
 *   - Outliers (the text of the rule is in struct ibc_logp_fit.rule): after
 *     the first fit, when n >= npar + 3 and MAD(r) > 0, the points whose
 *     residual r satisfies |r - median(r)| > 4 * 1.4826 * MAD(r) are
 *     rejected, the largest first, at most floor(n/10) of them (so none
 *     when n < 10), never one whose removal would leave fewer than npar + 1
 *     distinct p; then one refit on the kept points, from the first solution
 *     plus the grid.  If that refit does not converge the first fit is kept
 *     with no point rejected.  The residuals are those of the (unweighted)
 *     first fit, so an outlier that bends it can push a high-leverage point
 *     (smallest p) over the threshold too.
 *   - Statistics over the kept points: rss, rmse = sqrt(rss / nkept),
 *     r2 = 1 - rss/tss (tss around their mean; when tss == 0, r2 = 1 if
 *     rss == 0 else 0).
 *   - Standard errors: the covariance in the u space from
 *     gsl_multifit_nlinear_covar (on the Jacobian with unit-norm columns,
 *     epsrel 1e-5, then scaled back), times rss/(nkept - npar), carried to
 *     lambda by the delta method: se(l_j) = sqrt(C_jj) * |d l_j / d u_j|.
 *     They assume independent errors of equal variance.
 *   - Physical range: rtt's l1 and l3 and ov's l1 are times, >= 0
 *     (lambda = u^2; at the bound below 1e-6 us, polished as the others).
 *   - Identifiability: the eigenvalues of J^T J (J in u, columns scaled to
 *     unit norm; the column of a parameter at a bound set to zero) at the
 *     solution; eigenvalues <= 1e-10 times the largest span the null space,
 *     and identifiable = 1 when it is empty.  A parameter with a squared
 *     loading > 1e-12 on the null space is not determined: its se is NAN
 *     (as is that of a parameter at a bound).  The rtt model is structurally
 *     degenerate: the data determine only l3 + l4 and l4*exp(-l5*l6) (the
 *     columns obey d/dl6 = l4*l5*(d/dl3 - d/dl4) at every p), so rtt fits
 *     report identifiable = 0 and se = NAN for l3, l4, l6 (and more when,
 *     e.g., l4 = 0); l1, l2 and l5 keep their se.
 *
 * GSL's error handler is switched off during a fit (and restored after), so
 * GSL never aborts the process; the handler is global state, so do not run
 * fits concurrently with other GSL users that rely on it. */
#ifndef IBC_LOGP_FIT_H
#define IBC_LOGP_FIT_H

#include <stddef.h>

enum ibc_logp_fit_model { IBC_LOGP_FIT_RTT = 0, IBC_LOGP_FIT_OV = 1 };

#define IBC_LOGP_FIT_MAXPAR 6

struct ibc_logp_fit {
	enum ibc_logp_fit_model model;
	int npar;                          /* 6 or 3 */
	double lambda[IBC_LOGP_FIT_MAXPAR];
	double se[IBC_LOGP_FIT_MAXPAR];    /* standard errors; NAN where not identifiable */
	int identifiable;                  /* 1 when J^T J had full rank at the solution */
	double r2, rss, rmse;              /* over the points kept */
	size_t n, nkept;                   /* points given, points kept */
	int starts, converged;             /* starting points tried, that converged */
	char rule[96];                     /* the outlier rule, as text, for the CSV */
	char form[8];                      /* the form fitted: rtt6 .. rtt1, ov3 .. ov1 */
	int nfree;                         /* its free parameters */
	double aicc;                       /* its AICc over the kept points (NAN: too few) */
	int positive;                      /* the curve > 0 at p = 1 .. the largest p */
	char cands[256];                   /* select: every form, "form:aicc:verdict;.." */
};

/* "rtt", "ov" ("?" for an unknown model). */
const char *ibc_logp_fit_model_name(enum ibc_logp_fit_model m);
/* 6, 3 (0 for an unknown model). */
int ibc_logp_fit_npar(enum ibc_logp_fit_model m);
/* The model at p with npar parameters lambda (NAN for an unknown model). */
double ibc_logp_fit_eval(enum ibc_logp_fit_model m, const double *lambda, double p);

/* Fits the paper's form (rtt6 or ov3) to t[i] ~ f(p[i]) for i < n.  rejected (n entries, may be NULL) gets 1 for
 * the points rejected as outliers, 0 for the others; resid (n entries, may be
 * NULL) gets t - f(p) for every point (also the rejected); both are written
 * only when IBC_OK is returned.  Returns
 *   IBC_OK;
 *   IBC_ERR_INVAL (logged) for bad input: NULL out, p or t, an unknown
 *     model, n == 0, a non-finite value, p < 1; out is not touched;
 *   IBC_ERR_UNSUPPORTED, not logged, when there are fewer than npar + 1
 *     distinct p values: out->model, npar, n and rule are set, lambda and
 *     the statistics are 0, se NAN, nothing else is meaningful;
 *   IBC_ERR_NOTFOUND (not logged: a result) when no start converged, IBC_ERR_NOMEM
 *     (logged): out as for IBC_ERR_UNSUPPORTED, plus starts and converged.
 * Not thread-safe while other threads use GSL (see above). */
int ibc_logp_fit_run(enum ibc_logp_fit_model m, const double *p, const double *t, size_t n,
		     struct ibc_logp_fit *out, unsigned char *rejected, double *resid);

/* 1 when f may be used for prediction: identifiable, positive, an AICc. */
int ibc_logp_fit_usable(const struct ibc_logp_fit *f);

/* As ibc_logp_fit_run, over the paper's form and its reductions (every
 * form's l6 = 0 (rtt5), with l2 = 0 too (rtt4), or terms that vanish: rtt3p = l1/(l2+p) + l3,
 * rtt3s = l3 + l4 (1 - e^(l5 p)), rtt2 = l1/p + l3, rtt1 = l3; ov2 =
 * l1 + l2/p, ov1 = l1), each fitted as above; outliers by the residuals of
 * the form with the smallest AICc, then every form refitted on the kept
 * points.  The choice: the smallest AICc (n ln(rss/n) + 2K + 2K(K+1)/(n-K-1),
 * K = the free parameters + 1, rss floored at a relative 1e-9 so that exact
 * fits compare by K) among the forms that are identifiable and positive;
 * when none is, the smallest AICc of any, with identifiable or positive 0
 * (not for prediction).  out->cands lists every form and its verdict. */
int ibc_logp_fit_select(enum ibc_logp_fit_model m, const double *p, const double *t, size_t n,
			struct ibc_logp_fit *out, unsigned char *rejected, double *resid);

#endif
