/* Whether a measured row and the kernels that predict it were measured at
 * one placement.  Every run measures the placement probe (harness/probe.c,
 * one-way cache-line or RDMA latency) at its start (each row's probe_us)
 * and at its end (meta.csv, probe_end_us).  On a host whose cores move
 * between near and far (this project's test host: ~0.04 against ~0.19 us)
 * a kernel measured near predicts nothing about a row measured far, and a
 * closed loop that compares them gives errors of the placement, not of the
 * model.  Two probes more than IBC_LOGP_PLACE_FACTOR apart are two
 * placements.  A row at N ranks is held to the kernels measured at N (the
 * ones its prediction takes), else to those of every N; an oversubscribed
 * run's probe is the scheduler's, not a placement, and is left out (its
 * rows are not modelled anyway). */
#ifndef IBC_LOGP_PLACE_H
#define IBC_LOGP_PLACE_H

#include <stddef.h>
#include <stdio.h>

#define IBC_LOGP_PLACE_FACTOR 2.0
#define IBC_LOGP_PLACE_MAX 64 /* (transport, N) pairs, and runs, kept track of */

struct ibc_csv_table;

struct ibc_logp_place {
	struct {
		char xport[16];
		int ranks;
		double lo, hi;           /* the kernels' (logp rows') probe_us at N = ranks */
	} k[IBC_LOGP_PLACE_MAX];
	int nk;
	struct {
		char suite[16];
		int ranks;               /* 0: not recorded (any N) */
		double start, end;       /* a run whose probe moved (meta.csv) */
	} moved[IBC_LOGP_PLACE_MAX];
	int nmoved;
};

/* The kernels' placement from the logp rows of t (dir's results), or of
 * fits_dir's results.csv when that is another directory, and the runs whose
 * probe moved from dir's and fits_dir's meta.csv (any of them may be
 * missing: nothing is known of it then). */
void ibc_logp_place_load(struct ibc_logp_place *pl, const struct ibc_csv_table *t,
			 const char *dir, const char *fits_dir);
/* NULL when a row of suite and xport at N ranks measured at probe_us is at
 * its kernels' placement, or when no probe says otherwise; else the reason
 * it is not modelled, "not modelled (placement: ...)", in b. */
const char *ibc_logp_place_check(const struct ibc_logp_place *pl, const char *suite,
				 const char *xport, int ranks, double probe_us, char *b, size_t cap);
/* One line on out: the kernels' probe, and any run whose probe moved. */
void ibc_logp_place_say(const struct ibc_logp_place *pl, FILE *out);

#endif
