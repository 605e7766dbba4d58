/* The cost models of Sur et al. (eq. 1-4), their parameters measured by the
 * suite itself, and the predictions written beside the measured rows.
 *
 * Parameters (ibc_alltoall_model_measure, collective; ranks 0 and 1 measure,
 * the others take part in the set-ups):
 *   ts, tw       RDMA write + flag, one way, into mr_alloc'd memory (HRWG's
 *                collective buffer): the time at 8 B and the slope of a
 *                least-squares line over 8 B .. 1 MiB (ping-pong medians)
 *   ts_u, tw_u   the same into user memory registered with mr_reg (DE's
 *                receive buffer, the rendezvous' target; on shm a syscall)
 *   ts2          a two-sided eager exchange of 8 B
 *   trndz        a two-sided rendezvous exchange of 8 B (RTS, CTS, write, FIN)
 *   tcreg, twreg ibc_xport_mr_reg of fresh buffers of 4 KiB .. 4 MiB: the
 *                line's intercept and slope (per byte)
 *   tcopy        memcpy per byte, 4 KiB .. 4 MiB
 *   (tread)      the write ping-pong again with each receiver copying the data
 *                out: what reading freshly written data costs
 *
 * Two predictions per (algorithm, p, m), buffers reused (registrations
 * cached, the paper's assumption for Fig. 20); the combining schedules'
 * rounds (moved blocks per step) come from impl/pattern:
 *   literal (the paper as printed):
 *     hrwg        eq. 1: sum over steps (ts + tw moved(s) m)  (= (ts + tw m p/2) log2 p)
 *     hypercube, bruck  eq. 1 with ts2
 *     pairwise    eq. 2 (p - 1)(ts2 + tw m) up to the eager limit, else eq. 3
 *     direct      eq. 3 (p - 1)(trndz + tw m)  [+ (p - 1)(tcreg + m twreg) without reuse]
 *     de          eq. 4 tw m (p - 1)           [+ tcreg + (p - 1) m twreg without reuse]
 *   ibchar's (the rows' p50_us): the measured times interpolated between the
 *   measured sizes instead of the lines (a write or copy that stays in cache
 *   is faster per byte than one that does not), plus what this implementation
 *   does that the equations leave out: HRWG's copy in and its reading of each
 *   received block where it landed; the
 *   baselines' packing and eager copies; the zero-copy writes into user
 *   memory at ts_u, tw_u; DE's first address latency and a startup per step
 *   (eq. 4 has none, so it predicts 0 for small m). */
#ifndef IBC_ALLTOALL_MODEL_H
#define IBC_ALLTOALL_MODEL_H

#include <stddef.h>

struct ibc_xport;

struct ibc_alltoall_model {
	int ranks;
	double ts, tw;          /* us, us per byte */
	double ts2, trndz;      /* us */
	double tcreg, twreg;    /* us, us per byte */
	double ts_u, tw_u;      /* the write into user memory (mr_reg): DE's and the rendezvous' */
	double tcopy;           /* memcpy, us per byte */
	/* the measured points behind the fits, for ibchar's predictions
	 * (piecewise linear between them: caches make the rates size-dependent) */
	double w_x[8], w_y[8], u_y[8];  /* write + flag one way: bytes, us (shared; user memory) */
	double r_y[8];                  /* the same, the receiver reading the data */
	double c_x[8], c_y[8];          /* memcpy: bytes, us */
	int nw, nc;
	double resid_w, resid_u, resid_reg; /* the fits' residual standard deviations, us */
	int valid;              /* 0 when fewer than 2 ranks (nothing measured) */
};

int ibc_alltoall_model_measure(struct ibc_xport *x, size_t eager, struct ibc_alltoall_model *out);
/* us, or -1 when alg has no model; *eq (may be NULL) names the equation.
 * literal: the paper's equation as printed; predict: ibchar's, the paper's
 * plus the terms of this implementation (see above). */
double ibc_alltoall_model_literal(const struct ibc_alltoall_model *md, const char *alg, int p,
				  size_t m, size_t eager, int reuse, const char **eq);
double ibc_alltoall_model_predict(const struct ibc_alltoall_model *md, const char *alg, int p,
				  size_t m, size_t eager, int reuse, const char **eq);
/* Rank 0, after a run into dir: the parameters (dir/alltoall_model.csv),
 * an impl=model row for every measured row of this run (the newest run_id
 * of the suite in dir/results.csv) with measured_us and err_pct, the
 * extrapolation of DE against the direct ring at 4 KiB to p = 4096 and the
 * HRWG/DE crossover (dir/alltoall_extrapolation.csv, also logged). */
int ibc_alltoall_model_write(const char *dir, const struct ibc_alltoall_model *md, size_t eager);

#endif
