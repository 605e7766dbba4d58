/* A global clock for the ranks of a job (after SKaMPI and ReproMPI): every
 * rank maps its own clock (ibc_timer_now_us: the invariant TSC or
 * CLOCK_MONOTONIC, in microseconds) onto rank 0's by a linear model
 *
 *   global_us = local_us - (offset + drift * (local_us - ref))
 *
 * built hierarchically:
 *  - within a node the clock is shared: the TSC is invariant (CPUID, checked
 *    by core/timer) and the kernel keeps it in step across CPUs (its
 *    clocksource, recorded); the model of a rank is its node leader's (local
 *    rank 0), identity on rank 0's node;
 *  - across nodes each leader's model against rank 0 is fitted by least
 *    squares (Jones-Koenig style) over G groups of ping-pongs spread over
 *    some milliseconds; from each group the round trip with the smallest
 *    time gives one (local time, offset) point; the fit gives offset and
 *    drift, its RMS residual is recorded.  The ping-pongs go over the
 *    transport (RDMA writes) when one is given, else over the bootstrap.
 *
 * Then every model is checked, in global time, by fresh ping-pongs: the
 * leader against each rank of its node (one cache line in shared memory)
 * and rank 0 against each leader.  For a sample (A sends at a1, B reads its
 * clock at b, A sees the answer at a2, all mapped to global time) causality
 * puts the true offset of B within |b - (a1 + a2) / 2| + (a2 - a1) / 2; a
 * model whose offset is more than the round trip's half (plus 3 fit
 * residuals and 50 ns) off fails the check.  err_us is the largest such
 * bound over all pairs: how far any rank's global time may be from rank 0's.
 *
 * IBC_GCLOCK_MUTANT="RANK:US" shifts one rank's model by US microseconds
 * after the fit (a test hook: the check must catch it). */
#ifndef IBC_HARNESS_GCLOCK_H
#define IBC_HARNESS_GCLOCK_H

#include <stdint.h>

#include "core/wait.h"

struct ibc_boot;
struct ibc_xport;

struct ibc_gclock {
	int ok;               /* the check passed on every rank: usable for window mode */
	char method[48];      /* "shared (tsc)", "fit over xport verbs (tsc)", ... */
	char why[192];        /* the failure, when !ok */
	double err_us;        /* the check's bound on |global - rank 0's time| over all ranks */
	double rtt_us;        /* the smallest round trip of the check (the bound's floor) */
	double resid_us;      /* the largest RMS residual of the fits (0 on one node) */
	int worst_rank;       /* whose |offset| - rtt / 2 is the largest (the check's worst) */
	/* this rank's model */
	double offset_us, drift, ref_us;
};

/* Collective over b.  x (may be NULL) carries the ping-pongs across nodes
 * when given (it is connected to the pairs it needs here); w is how waits
 * wait.  IBC_OK also when the check failed (g->ok = 0, g->why says how); an
 * error only when the exchange itself failed. */
int ibc_gclock_sync(struct ibc_boot *b, struct ibc_xport *x, enum ibc_wait w,
		    struct ibc_gclock *g);

/* The check's evidence from one pair's ping-pongs (a1, b, a2 in global
 * time).  A right model puts every b within [a1, a2], so one sample outside
 * is proof against it: excess is the largest |b - mid| - rtt / 2 over the
 * samples (> 0: the model is off by at least that much).  It was the
 * smallest, and then one round trip slowed by a loaded host (6 ms) let a
 * 3 ms wrong offset pass.  bound is the tightest |b - mid| + rtt / 2 (how far
 * off the model may be), rtt the fastest round trip. */
struct ibc_gclock_evidence {
	double excess, bound, rtt;
};
void ibc_gclock_evidence_init(struct ibc_gclock_evidence *e);
void ibc_gclock_evidence_add(struct ibc_gclock_evidence *e, double a1, double b, double a2);

/* Least squares of a leader's offsets y from rank 0 at its local times x (n
 * points): m's offset_us at ref_us (the mean x) and its drift, *resid the
 * RMS residual.  The drift is kept only where the points show it beyond
 * Student's t for n - 2 degrees of freedom at a two-sided 1e-4; else it is
 * 0 and resid is the offsets' spread about their mean.  (At three standard
 * errors, 4% of fits of six points with no drift in them kept one, a slope
 * of noise that moved the clocks hundreds of us apart over a point.) */
void ibc_gclock_fit(const double *x, const double *y, int n, struct ibc_gclock *m,
		    double *resid);

/* Global time of a local time, and back (microseconds). */
double ibc_gclock_global(const struct ibc_gclock *g, double local_us);
double ibc_gclock_local(const struct ibc_gclock *g, double global_us);
/* Global time now. */
double ibc_gclock_now(const struct ibc_gclock *g);

/* The kernel's clocksource ("tsc", "kvm-clock", ...) or "unknown". */
const char *ibc_gclock_clocksource(void);

#endif
