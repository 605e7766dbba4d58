/* ibchar-barrier-<mpi>: the barrier suite bootstrapped by the host MPI, so
 * ibchar's algorithms over shm/verbs and the MPI's own barriers run
 * interleaved on the same processes in one harness run:
 *
 *   mpi     MPI_Barrier
 *   mpi-pe  pairwise exchange (MPICH's recursive doubling, with the extra
 *           fold-in/release steps for non-powers of two) over MPI_Sendrecv
 *           with 0-byte messages
 *   mpi-ds  dissemination over MPI_Sendrecv with 0-byte messages
 *
 * Partners come from impl/pattern; rows of these variants have
 * impl=<mpi> (openmpi, mpich); every row gets factor_vs_mpi, factor_vs_mpi_pe
 * and factor_vs_mpi_ds.  The MPI library version goes to meta.csv. */
#include "barrier/barrier_suite.h"
#include "core/log.h"
#include "harness/harness.h"
#include "core/status.h"
#include "pattern/pattern.h"
#include "suite/suite.h"

#include <mpi.h>
#include <stdio.h>

#define TAG_BARRIER 0x1bc

enum mpi_kind { MPI_KIND_BARRIER, MPI_KIND_PE, MPI_KIND_DS };

static enum mpi_kind kinds[3] = { MPI_KIND_BARRIER, MPI_KIND_PE, MPI_KIND_DS };
static struct ibc_suite_mpi_job job; /* this rank, the job's size (set at boot) */

static int mpi_err(const char *what, int err)
{
	return ibc_harness_mpi_error("barrier mpi", what, err);
}

/* One step: 0-byte signal to send_to, wait for recv_from (either may be -1). */
static int step_do(const struct ibc_pattern_step *st)
{
	char dummy = 0;
	int err;

	if (st->send_to >= 0 && st->recv_from >= 0)
		err = MPI_Sendrecv(&dummy, 0, MPI_BYTE, st->send_to, TAG_BARRIER, &dummy, 0, MPI_BYTE,
				   st->recv_from, TAG_BARRIER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	else if (st->send_to >= 0)
		err = MPI_Send(&dummy, 0, MPI_BYTE, st->send_to, TAG_BARRIER, MPI_COMM_WORLD);
	else if (st->recv_from >= 0)
		err = MPI_Recv(&dummy, 0, MPI_BYTE, st->recv_from, TAG_BARRIER, MPI_COMM_WORLD,
			       MPI_STATUS_IGNORE);
	else
		return IBC_OK;
	return err == MPI_SUCCESS ? IBC_OK : mpi_err("MPI_Sendrecv", err);
}

static int mpi_barrier_run(void *ctx)
{
	const enum mpi_kind *kind = ctx;
	struct ibc_pattern_step st;
	int s, nsteps, rc = IBC_OK, err;

	switch (*kind) {
	case MPI_KIND_BARRIER:
		err = MPI_Barrier(MPI_COMM_WORLD);
		return err == MPI_SUCCESS ? IBC_OK : mpi_err("MPI_Barrier", err);
	case MPI_KIND_PE:
		nsteps = ibc_pattern_pe_nsteps(job.size);
		for (s = 0; s < nsteps && rc == IBC_OK; s++) {
			rc = ibc_pattern_pe_step_get(job.size, job.rank, s, &st);
			if (rc == IBC_OK)
				rc = step_do(&st);
		}
		return rc;
	case MPI_KIND_DS:
		nsteps = ibc_pattern_diss_nsteps(job.size);
		for (s = 0; s < nsteps && rc == IBC_OK; s++) {
			rc = ibc_pattern_diss_step_get(job.size, job.rank, s, &st);
			if (rc == IBC_OK)
				rc = step_do(&st);
		}
		return rc;
	}
	return IBC_ERR_INVAL;
}

int main(int argc, char **argv)
{
	static const struct ibc_barrier_suite_fn fns[3] = {
		{ mpi_barrier_run, &kinds[0] }, { mpi_barrier_run, &kinds[1] },
		{ mpi_barrier_run, &kinds[2] },
	};
	struct ibc_suite_variant vars[3];

	vars[0] = ibc_barrier_suite_fn_variant("mpi", ibc_suite_mpi_name, "MPI_Barrier", &fns[0]);
	vars[1] = ibc_barrier_suite_fn_variant("mpi-pe", ibc_suite_mpi_name,
					       "pairwise exchange over MPI_Sendrecv (0 bytes)", &fns[1]);
	vars[2] = ibc_barrier_suite_fn_variant("mpi-ds", ibc_suite_mpi_name,
					       "dissemination over MPI_Sendrecv (0 bytes)", &fns[2]);
	return ibc_suite_mpi_main(&ibc_barrier_suite, vars, 3, &job, argc, argv);
}
