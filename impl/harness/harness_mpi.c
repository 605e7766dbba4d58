/* MPI-only parts of the harness (linked into the *-<mpi> binaries). */
#include "harness/harness.h"

#include "core/log.h"
#include "core/status.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

void ibc_harness_mpi_version(char *buf, size_t cap)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	char *nl;

	if (cap == 0)
		return;
	if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) {
		snprintf(buf, cap, "unknown");
		return;
	}
	v[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
	nl = strchr(v, '\n');
	if (nl != NULL)
		*nl = '\0';
	snprintf(buf, cap, "%s", v);
}

int ibc_harness_mpi_error(const char *who, const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "MPI error %d", err);
	ibc_error("%s: %s: %s", who, what, msg);
	return IBC_ERR_REMOTE;
}
