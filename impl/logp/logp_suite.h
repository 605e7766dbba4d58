/* The LoP suite (Hoefler & Rehm, PARS 2005): the model's parameters
 * measured on the transport, per number of peers p (the fanin column), on
 * the suite driver.
 *
 * Kernels (rank 0 is the "1" of 1:n; peers are ranks 1..p; 1-byte messages
 * by default, --sizes honoured):
 *   os-{send,write}[-list][-inline]  o_s(p): the post call(s) of p requests,
 *        timed with the TSC around the call(s) alone, per request (time/p);
 *        single = one call per request, list = one call of p requests
 *   or[-list]                        o_r(p): posting p receives, per request
 *   rtt-{send,write}-1n[-list]       RTT(p), 1:n: rank 0 sends to p peers,
 *        each answers; the time until every answer is in, divided by p (the
 *        paper's t_rtt(p) falls with p); -list posts the p requests as one
 *        list (for L_list)
 *   rtt-{send,write}-n1              RTT(p), n:1: p peers send to rank 0,
 *        which answers each; the slowest peer's round trip, divided by p
 *   loggp-prtt1, -prttn, -prttd      Netgauge's parametrised round trip
 *        PRTT(n, d, s) between ranks 0 and 1 (n = 1; n = 16, d = 0; n = 16,
 *        d = PRTT(1, 0, s)): rank 0 sends n messages d apart, rank 1
 *        answers the n-th; LogGP's o, g, L, G follow (logp_fits.c)
 * After every run rank 0 fits the run's rows (logp_fits.h) into
 * DIR/fits.csv and DIR/logp-derived.csv. */
#ifndef IBC_LOGP_SUITE_H
#define IBC_LOGP_SUITE_H

#include "suite/suite.h"

extern const struct ibc_suite_def ibc_logp_suite;

/* PRTT's message count for the n > 1 kernels. */
#define IBC_LOGP_PRTT_N 16

#endif
