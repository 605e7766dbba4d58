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
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "harness/harness.h"
#include "pattern/pattern.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#ifndef IBC_MPI_NAME
#define IBC_MPI_NAME "mpi"
#endif

#define TAG_A2A 0xa2a

enum mpi_kind { MPI_KIND_ALLTOALL, MPI_KIND_PAIRWISE };

struct mpi_a2a {
	enum mpi_kind kind;
	int rank, size;
};

static struct mpi_a2a ma[2];

static int mpi_err(const char *what, int err)
{
	return ibc_harness_mpi_error("alltoall mpi", what, err);
}

static int mpi_a2a_run(void *ctx, const void *sbuf, void *rbuf, size_t m)
{
	const struct mpi_a2a *a = ctx;
	const char *in = sbuf;
	char *out = rbuf;
	int n = a->size, i, err, xor = ibc_pattern_pow2_is(n);

	if (m > INT_MAX) {
		ibc_error("alltoall mpi: %zu bytes per block is beyond an MPI count", m);
		return IBC_ERR_INVAL;
	}
	if (a->kind == MPI_KIND_ALLTOALL) {
		err = MPI_Alltoall(sbuf, (int)m, MPI_BYTE, rbuf, (int)m, MPI_BYTE, MPI_COMM_WORLD);
		return err == MPI_SUCCESS ? IBC_OK : mpi_err("MPI_Alltoall", err);
	}
	memcpy(out + (size_t)a->rank * m, in + (size_t)a->rank * m, m);
	for (i = 1; i < n; i++) {
		int to = xor ? a->rank ^ i : ibc_pattern_ring_next(n, a->rank, i);
		int from = xor ? to : ibc_pattern_ring_prev(n, a->rank, i);

		err = MPI_Sendrecv(in + (size_t)to * m, (int)m, MPI_BYTE, to, TAG_A2A,
				   out + (size_t)from * m, (int)m, MPI_BYTE, from, TAG_A2A,
				   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (err != MPI_SUCCESS)
			return mpi_err("MPI_Sendrecv", err);
	}
	return IBC_OK;
}

static int boot_open(int *argc, char ***argv, struct ibc_boot **out)
{
	int rc = ibc_boot_mpi_open(argc, argv, out), k;

	for (k = 0; rc == IBC_OK && k < 2; k++) {
		ma[k].rank = (*out)->rank;
		ma[k].size = (*out)->size;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct ibc_alltoall_suite_fn fns[2] = {
		{ mpi_a2a_run, &ma[0] }, { mpi_a2a_run, &ma[1] },
	};
	static char version[256];
	struct ibc_suite_variant vars[2];
	struct ibc_suite_ext ext = {
		.prog_suffix = "-" IBC_MPI_NAME,
		.boot_open = boot_open,
		.variants = vars,
		.nvariants = 2,
		.mpi_version = version,
	};

	ma[0].kind = MPI_KIND_ALLTOALL;
	ma[1].kind = MPI_KIND_PAIRWISE;
	vars[0] = ibc_alltoall_suite_fn_variant("mpi", IBC_MPI_NAME, "MPI_Alltoall", &fns[0]);
	vars[1] = ibc_alltoall_suite_fn_variant("mpi-pairwise", IBC_MPI_NAME,
						"pairwise exchange over MPI_Sendrecv", &fns[1]);
	ibc_harness_mpi_version(version, sizeof(version));
	return ibc_suite_main(&ibc_alltoall_suite, &ext, argc, argv);
}
