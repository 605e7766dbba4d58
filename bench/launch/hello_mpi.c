/* ibchar-launch-hello-<mpi>: the launch suite's real MPI program, built per
 * host MPI: MPI_Init and MPI_Finalize, stamped (impl/launch/stamp.h):
 * t_start at main, t_init after MPI_Init, t_end after MPI_Finalize.
 * Usage: ibchar-launch-hello-<mpi> STAMPFILE */
#include "launch/stamp.h"
#include "core/status.h"

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct ibc_launch_stamp st = { .t_start = ibc_launch_stamp_now() };

	if (argc != 2) {
		fprintf(stderr, "Usage: %s STAMPFILE\n", argv[0]);
		return 2;
	}
	MPI_Init(&argc, &argv);
	st.t_init = ibc_launch_stamp_now();
	MPI_Comm_rank(MPI_COMM_WORLD, &st.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &st.size);
	MPI_Finalize();
	st.t_end = ibc_launch_stamp_now();
	return ibc_launch_stamp_write(argv[1], &st) == IBC_OK ? 0 : 1;
}
