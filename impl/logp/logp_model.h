/* The LoP closed loop: the fitted model (logp_fits.h) predicts the
 * collectives' measured rows.
 *
 * A family is a suite whose variants have a round structure (impl/pattern,
 * through the algorithm tables: barrier.h, alltoall.h); each measured row
 * of such a suite (impl=ibchar, any run in DIR/results.csv) is predicted
 * by summing its rounds' costs, from the kernels of the same transport and
 * N (ibc_logp_params_value: the fit at that N, else the rows, else the
 * largest N's), against the row's back-to-back loop (its median
 * b2b_p50_us, or with opts.meas_mean its mean paper_us; else the other,
 * else p50_us), by three models:
 *
 *   LoP (§4.4, as printed): a round in which the busiest rank sends to or
 *     waits for k = max(out, in) peers costs t_1:k = o_s(k) + k L(k), with
 *     L(k) = RTT(k)/2 - (o_s(k) + o_s(1)) from the p50 of rtt-*-1n and
 *     os-* (write rounds: the RDMA write kernels; send rounds: send/recv;
 *     a multicast release: rtt-mcast, else send at k = 1), all timed one
 *     call at a time.
 *   LoP-RTT: k RTT(k)/2 per round, the same kernels without the overhead
 *     algebra (which goes negative where o_s is not << L), RTT from the
 *     kernel's back-to-back loop (b2b_p50_us) where the run has one and
 *     opts.b2b asks for it.
 *   LogGP: 2o + L + (s-1)G + (k-1) max(o, g + (s-1)G) per round, o, g, L
 *     at the smallest size and G over the sizes (Netgauge's PRTT method).
 *
 * LoP has no message size: ibchar evaluates it at the measured sizes and
 * interpolates linearly in the round's bytes (past the largest, LogGP's G
 * per further byte and message, flagged size>max).
 *
 * Copies: a round also carries the algorithm's local copies (pattern.h:
 * copies, copies_peer, eager), costed by the logp kernels copy (a memcpy
 * from the rank's own memory) and copy-peer (out of memory a peer has just
 * written), p50, linear in the bytes between their sizes, and added to
 * every model (column copy_us).  A run without those rows predicts no
 * algorithm that copies ("no prediction: no copy rows ..."); stdout says
 * whether the copy term is there.
 *
 * Outputs (beside results.csv):
 * Every value leaves through one guard: a prediction that is not finite
 * (a kernel without a usable fit or row) or is <= 0 is empty in the CSVs,
 * its status column says "no prediction: why", and stdout says the same.
 * A row with more ranks per node than PUs (--pus, else its oversub
 * column) is "not modelled (oversubscribed)"; a row modelled under --pus
 * but measured oversubscribed gets no error.
 *
 * Outputs (beside results.csv):
 *   lop-model.csv: suite, variant, xport, ranks, bytes, fanin, oversub
 *     (measured oversubscribed), measured_us, measured_as (b2b_p50_us|paper_us|p50_us),
 *     p50_us, lop_us, lop_err, lop_rtt_us, lop_rtt_err, loggp_us,
 *     loggp_err, rounds, note (k>pmax, params-of-other-N, points, size>max,
 *     mcast~send (a run without rtt-mcast rows: RGM's release costed as
 *     a send round trip), no-G, lop<=0, loggp<0->0: a LogGP parameter
 *     estimated < 0 held at 0, mcast<=0: the multicast one way from
 *     rtt-mcast is not a time, rtt~b2b: LoP-RTT's round trip from its
 *     kernel's back-to-back loop (opts.b2b), oversub), lop_status, lop_rtt_status,
 *     loggp_status ("ok", "no prediction: ..", "not modelled
 *     (oversubscribed)"), best (the model closest to the measurement),
 *     best_err, copy_us (the copy term in each model's value; empty: not
 *     costed)
 *   lop-extrapolation.csv: the same algorithms at N = 1 K, 4 K, 16 K and
 *     64 K, method "model-eval" (the model evaluated over the pattern's
 *     rounds: no contention, no simulator), with the status columns
 *   lop-fanin.csv: RGM's fan-in per N (l = 2^k - 1 up to the flat tree)
 *     by each model, the measured sweep's best, the model that chooses
 *     (the smallest mean |err| on the barrier rows, LoP when none), its
 *     l, the measured time at that l and model_over_best = that / the
 *     measured best; status
 * and the tables on out. */
#ifndef IBC_LOGP_MODEL_H
#define IBC_LOGP_MODEL_H

#include <stddef.h>
#include <stdio.h>

struct ibc_pattern_round;

struct ibc_logp_family {
	const char *suite;
	int (*rounds)(const char *variant, int n, long fanin, struct ibc_pattern_round *r, int cap);
};

struct ibc_logp_model_opts {
	const char *dir;                      /* DIR/results.csv; outputs go here */
	const char *fits_dir;                 /* fits.csv, logp-derived.csv; NULL: dir */
	const struct ibc_logp_family *fams;
	size_t nfams;
	FILE *out;                            /* the table; NULL: none */
	int pus;                              /* > 0: PUs per node (rows with more ranks
					       * per node are not modelled); 0: each
					       * row's oversub column */
	int any_placement;                    /* 1: model a row whatever the placement
					       * probe says (logp_place.h) */
	int b2b;                              /* 1: the round trips (rtt-*) from the
					       * kernels' back-to-back loops (stat b2b,
					       * b2b_p50_us) where the run has them, else
					       * their p50; 0: p50 */
	int meas_mean;                        /* 1: a row is measured by its back-to-back
					       * loop's mean (paper_us); 0: by the loop's
					       * median (b2b_p50_us); either way else
					       * the other, else p50_us */
};

/* IBC_ERR_NOTFOUND (logged) when there are no fits or no rows to predict. */
int ibc_logp_model_run(const struct ibc_logp_model_opts *o);

#endif
