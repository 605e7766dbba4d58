/* The host-MPI build of a suite, written once (compiled per MPI into
 * libibchar-mpi.a): what every bench/<suite>/mpi.c main did around its own
 * variants.  ibc_suite_mpi_main opens the MPI bootstrap (ibc_boot_mpi_open)
 * and tells the variants' kernels their rank and the job's size, names the
 * program <prog>-<mpi>, records the MPI library's version for meta.csv and
 * runs the suite driver with the MPI's variants after the suite's own. */
#include "suite/suite.h"

#include "boot/boot.h"
#include "core/status.h"
#include "harness/harness.h"

#include <mpi.h>

#ifndef IBC_MPI_NAME
#define IBC_MPI_NAME "mpi"
#endif

const char ibc_suite_mpi_name[] = IBC_MPI_NAME;

/* where the running bench wants its rank and size (the driver's boot_open
 * callback takes no context) */
static struct ibc_suite_mpi_job *job_out;

static int boot_open(int *argc, char ***argv, struct ibc_boot **out)
{
	int rc = ibc_boot_mpi_open(argc, argv, out);

	if (rc == IBC_OK && job_out != NULL) {
		job_out->rank = (*out)->rank;
		job_out->size = (*out)->size;
	}
	return rc;
}

/* the MPI's progress engine, turned by a probe that receives nothing */
static int mpi_progress(void)
{
	int flag = 0;

	return MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) ==
			       MPI_SUCCESS
		       ? IBC_OK
		       : IBC_ERR_REMOTE;
}

int ibc_suite_mpi_main(const struct ibc_suite_def *d, const struct ibc_suite_variant *vars,
		       size_t nvars, struct ibc_suite_mpi_job *job, int argc, char **argv)
{
	static char version[256];
	struct ibc_suite_ext ext = {
		.prog_suffix = "-" IBC_MPI_NAME,
		.boot_open = boot_open,
		.variants = vars,
		.nvariants = nvars,
		.mpi_version = version,
		.progress = mpi_progress,
	};

	job_out = job;
	/* MPI_Get_library_version may be called before MPI_Init */
	ibc_harness_mpi_version(version, sizeof(version));
	return ibc_suite_main(d, &ext, argc, argv);
}
