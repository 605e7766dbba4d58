/* The all-to-all suite on the suite driver (impl/suite):
 *
 *   ibchar-alltoall         ibc_suite_main(&ibc_alltoall_suite, NULL, argc, argv)
 *   ibchar-alltoall-<mpi>   ... with the MPI's variants (bench/alltoall/mpi.c):
 *                           ibc_alltoall_suite_fn_variant()s of MPI_Alltoall etc.
 *
 * Variants: every algorithm of the all-to-all table (alltoall.h).  A point
 * is a message size m per pair; each variant has its own send and receive
 * buffers of p*m bytes, registered through one registration cache per run
 * (invalidated before the buffers are freed).  --validate fills the send
 * buffer before every timed iteration (untimed) and checks every byte of the
 * receive buffer after it (after the sample ends); the back-to-back loop is
 * not checked.  Rows carry paper_us (back-to-back calls: 1000 up to 16 KiB
 * per rank, fewer above), and the variant's counters over the timed
 * iterations: reg_hits, reg_misses, rndz, writes, sends, copy_bytes. */
#ifndef IBC_ALLTOALL_SUITE_H
#define IBC_ALLTOALL_SUITE_H

#include "suite/suite.h"

/* An all-to-all that is not one of the table's: fn(ctx, sbuf, rbuf, m) is
 * one collective call, IBC_OK or an error. */
struct ibc_alltoall_suite_fn {
	int (*fn)(void *ctx, const void *sbuf, void *rbuf, size_t m);
	void *ctx;
};

extern const struct ibc_suite_def ibc_alltoall_suite;

struct ibc_suite_variant ibc_alltoall_suite_fn_variant(const char *name, const char *impl,
						       const char *desc,
						       const struct ibc_alltoall_suite_fn *fn);

#endif
