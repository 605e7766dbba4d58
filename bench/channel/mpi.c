/* ibchar-channel-<mpi>: the channel suite bootstrapped by the host MPI, so
 * the channel's designs and the MPI's point to point run interleaved on the
 * same two processes:
 *
 *   mpi     ping-pong latency (as osu_latency: MPI_Send / MPI_Recv; RTT/2)
 *   mpi-bw  windowed bandwidth (as osu_bw: a window of MPI_Isend against
 *           MPI_Irecv, then a 4-byte ack); time per message; validated, each
 *           message of the window from and into its own buffer
 *
 * Rows of these variants have impl=<mpi>. */
#include "channel/channel_suite.h"
#include "core/log.h"
#include "core/status.h"
#include "harness/harness.h"
#include "suite/suite.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define TAG_DATA 0xc4a
#define TAG_ACK 0xc4b
#define MAX_WINDOW 64

static struct ibc_suite_mpi_job job; /* this rank, the job's size (set at boot) */

static int mpi_err(const char *what, int err)
{
	return ibc_harness_mpi_error("channel mpi", what, err);
}

static int mpi_kernel(void *ctx, void *sbuf, void *rbuf, size_t bytes, long window,
		      size_t stride)
{
	MPI_Request req[MAX_WINDOW];
	MPI_Status st[MAX_WINDOW];
	int n = (int)bytes, rank = job.rank, peer = 1 - rank, err = MPI_SUCCESS, ack = 0;
	long k;

	(void)ctx;
	if (bytes > INT_MAX || window > MAX_WINDOW) {
		ibc_error("channel mpi: %zu bytes, window %ld: beyond the kernel", bytes, window);
		return IBC_ERR_INVAL;
	}
	if (window == 0) { /* ping-pong; rank 1 answers with its own message */
		if (rank == 0) {
			err = MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
			if (err == MPI_SUCCESS)
				err = MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
					       MPI_STATUS_IGNORE);
		} else {
			err = MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
				       MPI_STATUS_IGNORE);
			if (err == MPI_SUCCESS)
				err = MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
		}
		return err == MPI_SUCCESS ? IBC_OK : mpi_err("ping-pong", err);
	}
	for (k = 0; k < window && err == MPI_SUCCESS; k++)
		err = rank == 0 ? MPI_Isend((char *)sbuf + (size_t)k * stride, n, MPI_BYTE, peer,
					    TAG_DATA, MPI_COMM_WORLD, &req[k])
				: MPI_Irecv((char *)rbuf + (size_t)k * stride, n, MPI_BYTE, peer,
					    TAG_DATA, MPI_COMM_WORLD, &req[k]);
	if (err == MPI_SUCCESS)
		err = MPI_Waitall((int)window, req, st);
	if (err == MPI_SUCCESS)
		err = rank == 0 ? MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD,
					   MPI_STATUS_IGNORE)
				: MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
	return err == MPI_SUCCESS ? IBC_OK : mpi_err("windowed bandwidth", err);
}

int main(int argc, char **argv)
{
	static const struct ibc_channel_suite_fn fns[2] = {
		{ mpi_kernel, NULL, 0 }, { mpi_kernel, NULL, 1 },
	};
	struct ibc_suite_variant vars[2];

	vars[0] = ibc_channel_suite_fn_variant("mpi", ibc_suite_mpi_name,
					       "ping-pong latency, as osu_latency (RTT/2)", &fns[0]);
	vars[1] = ibc_channel_suite_fn_variant("mpi-bw", ibc_suite_mpi_name,
					       "windowed bandwidth, as osu_bw; time per message",
					       &fns[1]);
	return ibc_suite_mpi_main(&ibc_channel_suite, vars, 2, &job, argc, argv);
}
