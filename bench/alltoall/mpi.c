/* ibchar-alltoall-<mpi>: the all-to-all suite bootstrapped by the host MPI,
 * so ibchar's algorithms over shm/verbs and the MPI's own run interleaved
 * on the same processes in one harness run:
 *
 *   mpi           MPI_Alltoall
 *   mpi-pairwise  pairwise exchange over MPI_Sendrecv (XOR partners for
 *                 powers of two, else rank + i / rank - i), as MPICH's
 *                 large-message algorithm
 *
 * Rows of these variants have impl=<mpi>; every row gets factor_vs_mpi. */
#include "alltoall/alltoall_suite.h"
#include "core/log.h"
#include "core/status.h"
#include "harness/harness.h"
#include "pattern/pattern.h"
#include "suite/suite.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define TAG_A2A 0xa2a

enum mpi_kind { MPI_KIND_ALLTOALL, MPI_KIND_PAIRWISE };

static enum mpi_kind kinds[2] = { MPI_KIND_ALLTOALL, MPI_KIND_PAIRWISE };
static struct ibc_suite_mpi_job job; /* this rank, the job's size (set at boot) */

static int mpi_err(const char *what, int err)
{
	return ibc_harness_mpi_error("alltoall mpi", what, err);
}

static int mpi_a2a_run(void *ctx, const void *sbuf, void *rbuf, size_t m)
{
	const enum mpi_kind *kind = ctx;
	const char *in = sbuf;
	char *out = rbuf;
	int n = job.size, i, err, xor = ibc_pattern_pow2_is(n);

	if (m > INT_MAX) {
		ibc_error("alltoall mpi: %zu bytes per block is beyond an MPI count", m);
		return IBC_ERR_INVAL;
	}
	if (*kind == MPI_KIND_ALLTOALL) {
		err = MPI_Alltoall(sbuf, (int)m, MPI_BYTE, rbuf, (int)m, MPI_BYTE, MPI_COMM_WORLD);
		return err == MPI_SUCCESS ? IBC_OK : mpi_err("MPI_Alltoall", err);
	}
	memcpy(out + (size_t)job.rank * m, in + (size_t)job.rank * m, m);
	for (i = 1; i < n; i++) {
		int to = xor ? job.rank ^ i : ibc_pattern_ring_next(n, job.rank, i);
		int from = xor ? to : ibc_pattern_ring_prev(n, job.rank, i);

		err = MPI_Sendrecv(in + (size_t)to * m, (int)m, MPI_BYTE, to, TAG_A2A,
				   out + (size_t)from * m, (int)m, MPI_BYTE, from, TAG_A2A,
				   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (err != MPI_SUCCESS)
			return mpi_err("MPI_Sendrecv", err);
	}
	return IBC_OK;
}

int main(int argc, char **argv)
{
	static const struct ibc_alltoall_suite_fn fns[2] = {
		{ mpi_a2a_run, &kinds[0] }, { mpi_a2a_run, &kinds[1] },
	};
	struct ibc_suite_variant vars[2];

	vars[0] = ibc_alltoall_suite_fn_variant("mpi", ibc_suite_mpi_name, "MPI_Alltoall", &fns[0]);
	vars[1] = ibc_alltoall_suite_fn_variant("mpi-pairwise", ibc_suite_mpi_name,
						"pairwise exchange over MPI_Sendrecv", &fns[1]);
	return ibc_suite_mpi_main(&ibc_alltoall_suite, vars, 2, &job, argc, argv);
}
