/* MPI hello + allreduce + a ring exchange, run under ibchar-launch by
 * mpich.t (built per MPI; mpich.t uses the -mpich binary). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, sum = 0, want, next, prev, got = -1, len;
	char name[MPI_MAX_PROCESSOR_NAME];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(name, &len);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	want = size * (size - 1) / 2;
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	printf("hello from rank %d of %d on %s: allreduce %s, ring %s\n", rank, size, name,
	       sum == want ? "ok" : "WRONG", got == prev ? "ok" : "WRONG");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return (sum == want && got == prev) ? 0 : 1;
}
