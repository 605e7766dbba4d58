/* The barrier suite on the suite driver (impl/suite):
 *
 *   ibchar-barrier         ibc_suite_main(&ibc_barrier_suite, NULL, argc, argv)
 *   ibchar-barrier-<mpi>   ... with an ibc_suite_ext whose variants are
 *                          ibc_barrier_suite_fn_variant()s of MPI_Barrier etc.
 *
 * Variants: every algorithm of the barrier table (barrier.h), RGM once per
 * fan-in (--fanin, default 1, 3, 7, 15, those below N); options --timeout
 * (RGM's NAK timer) and --mcast-drop (seeded discard of multicast datagrams
 * by their receivers, on shm and verbs).  Rows carry paper_us (1000
 * back-to-back barriers) and, for RGM, naks, retransmits, duplicates, pulls,
 * mcast_drops, gather_spins and spin_timeouts of its own instance over the
 * timed iterations. */
#ifndef IBC_BARRIER_SUITE_H
#define IBC_BARRIER_SUITE_H

#include "suite/suite.h"

/* A barrier that is not one of the table's (e.g. MPI_Barrier): fn(ctx) is
 * one collective barrier, IBC_OK or an error. */
struct ibc_barrier_suite_fn {
	int (*fn)(void *ctx);
	void *ctx;
};

extern const struct ibc_suite_def ibc_barrier_suite;

/* A variant measuring fn like the table's algorithms (validated the same
 * way, the same back-to-back figure); fn must outlive the run. */
struct ibc_suite_variant ibc_barrier_suite_fn_variant(const char *name, const char *impl,
						      const char *desc,
						      const struct ibc_barrier_suite_fn *fn);

#endif
