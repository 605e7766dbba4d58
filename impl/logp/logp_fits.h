/* The LoP suite's rows, fitted (§3 of Hoefler & Rehm) and derived (§4.4).
 *
 * Data sets: the rows of one run of suite logp in DIR/results.csv, per
 * transport, kernel (variant), message size and statistic (min_us, p50_us,
 * mean_us; and b2b, the extra's b2b_p50_us, for the kernels with a
 * back-to-back loop: rtt-write-1n, its post list, rtt-mcast, xchg-write), as points (p, t)
 * at the run's largest N (one job, p = 1..N-1,
 * as the paper's one 64-node run; smaller N's rows stay in results.csv
 * only).  rtt-* kernels are fitted to t_rtt(λ1..6), os-* and or* to
 * t_ov(λ1..3) (logp_fit.h: method, bounds, outlier rule).
 *
 * DIR/fits.csv, one row per data set:
 *   run_id, xport, variant, bytes, stat, model (rtt|ov), ranks, points,
 *   kept, l1..l6, se1..se6 (empty: not identifiable or not in the model),
 *   r2, rmse, identifiable, residuals ("p:r;..", every point), rejected
 *   ("p=..;p=.." of outliers), rule,
 *   starts, converged, status ("ok", or why there is no fit), pmax,
 *   form (the one chosen by ibc_logp_fit_select: rtt6 .. rtt1, ov3 .. ov1),
 *   nfree, aicc, forms (every form: "form:aicc:verdict;.."), oversub (a
 *   row of the data set measured with more ranks than PUs), usable (1: the
 *   model may use it: fitted, identifiable, positive, not oversubscribed),
 *   use ("yes", or "no: why")
 * DIR/logp-derived.csv, one row per value:
 *   run_id, xport, quantity, op, bytes, stat, p, value_us, source
 *   quantity L and L_list (§4.4: L(p) = RTT(p)/2 - (o_s(p) + o_s(1)),
 *   L_list(p) = RTT(p)/2 - (p o_s(p) + o_s(1))), source "measured" (the
 *   rows) or "fit" (the fitted curves at p = 1..pmax); and LogGP's o, g,
 *   L, G (quantity loggp_o, ...) from the PRTT rows' medians by Netgauge's
 *   method: g = (PRTT(n,0,s) - PRTT(1,0,s)) / (n-1), o = (PRTT(n,d,s) -
 *   PRTT(1,0,s)) / (n-1) - d, L = PRTT(1,0,s)/2 - 2 o (o_r taken equal to
 *   o_s), G = the slope of g(s) over the run's sizes (two sizes or more),
 *   from the jobs not oversubscribed.  Column status: "ok", or why a value
 *   < 0 is no time: L and L_list empty ("not physical: o_s(p) + o_s(1) =
 *   .. exceeds RTT(p)/2 = .."), LogGP's written as 0, what the model uses
 *   ("held at 0: ..").
 *
 * The model (ibc_logp_params_*) uses the usable fits and the kernel rows
 * not measured oversubscribed (the copy kernels, which sweep no peers, at
 * the p of their extra: 1). */
#ifndef IBC_LOGP_FITS_H
#define IBC_LOGP_FITS_H

#include <stddef.h>

#include "logp/logp_fit.h"

/* Reads DIR/results.csv, fits the rows of run run_id (NULL: the last run
 * with logp rows) and writes DIR/fits.csv and DIR/logp-derived.csv
 * (replacing them).  IBC_ERR_NOTFOUND when DIR has no logp rows. */
int ibc_logp_fits_write(const char *dir, const char *run_id);

/* ------------------------------------------------ the fitted model ---- */

#define IBC_LOGP_MAX_CURVES 2048
#define IBC_LOGP_MAX_GGP 64

struct ibc_logp_curve {
	char xport[16];
	char variant[40];
	char stat[8];
	size_t bytes;
	int ranks;              /* the job size N it was measured at */
	int ok;                 /* a usable fit (status "ok", usable 1) */
	double pmax;            /* the largest p fitted */
	struct ibc_logp_fit fit;
};

struct ibc_logp_loggp {
	char xport[16];
	int ranks;
	size_t bytes;
	double o, g, L, G;      /* NAN when not measured */
	int held;               /* one of them was estimated < 0 and written as 0 */
};

/* A kernel's measured row: min, p50, mean, b2b (NAN: no loop) at p on N
 * ranks. */
struct ibc_logp_point {
	char xport[16];
	char variant[40];
	size_t bytes;
	int ranks, p;
	double v[4];
};

/* The model of one logp run: its fits.csv, logp-derived.csv (LogGP) and
 * its kernels' rows in results.csv. */
struct ibc_logp_params {
	struct ibc_logp_curve curve[IBC_LOGP_MAX_CURVES];
	size_t ncurves;
	struct ibc_logp_loggp ggp[IBC_LOGP_MAX_GGP];
	size_t nggp;
	struct ibc_logp_point *pts;
	size_t npts;
	char run_id[64];
	int rtt_b2b;            /* the model's round trips: the b2b statistic where
				 * measured (1), else p50 (ibc_logp_model_opts.b2b) */
};

/* Loads DIR's fits.csv (required: IBC_ERR_NOTFOUND, logged, without it),
 * logp-derived.csv and the fitted run's logp rows of results.csv (both
 * optional).  ibc_logp_params_free releases the points. */
int ibc_logp_params_load(const char *dir, struct ibc_logp_params *out);
void ibc_logp_params_free(struct ibc_logp_params *pr);

/* The fitted curve of (xport, variant, stat) at exactly bytes, measured on
 * `ranks` ranks (0: the largest N with a fit); NULL when there is none. */
const struct ibc_logp_curve *ibc_logp_params_curve(const struct ibc_logp_params *pr, const char *xport,
						   const char *variant, const char *stat,
						   size_t bytes, int ranks);

/* Where a value came from (bits of *notes). */
enum ibc_logp_note {
	IBC_LOGP_NOTE_KMAX = 1,     /* p beyond the data: held at the largest p measured */
	IBC_LOGP_NOTE_OTHER_N = 2,  /* not measured at this N: the largest N's */
	IBC_LOGP_NOTE_POINT = 4     /* a measured row, not a fit (too few points at N) */
};

/* Kernel variant's statistic stat (0 min, 1 p50, 2 mean, 3 b2b) at p peers, size
 * bytes (exact), on N ranks: the fit at N when there is one, else the row
 * measured at N, else the fit (or the rows) of the largest N measured;
 * beyond the largest p, the value at the largest p.  NAN when nothing was
 * measured.  Adds enum ibc_logp_note bits to *notes. */
double ibc_logp_params_value(const struct ibc_logp_params *pr, const char *xport,
			     const char *variant, int stat, size_t bytes, int n, int p,
			     unsigned *notes);

#endif
