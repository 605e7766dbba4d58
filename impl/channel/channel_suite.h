/* The channel suite on the suite driver (impl/suite): two ranks.
 *
 *   ibchar-channel         ibc_suite_main(&ibc_channel_suite, NULL, argc, argv)
 *   ibchar-channel-<mpi>   ... with the MPI's variants (bench/channel/mpi.c)
 *
 * Variants, for every design of the channel table (channel.h) D:
 *   D           latency: a ping-pong of the size through the channel; one-way
 *               = RTT / 2 (rows carry paper_us, back to back)
 *   D-bw        bandwidth: a window of messages streamed, then a 1-byte ack;
 *               time per message (bytes / time = the bandwidth)
 *   D-bibw      both ranks stream a window at once; time per message each way
 * and the sweeps: pipeline-bw-c4k .. -c64k (chunk size; pipeline-bw is 16 KiB)
 * and piggyback-bw-l1k .. -l128k (the lazy tail threshold; the default is a
 * quarter of the ring); the upper line rdma-write / rdma-write-bw, raw RDMA
 * writes with no channel (the message's last word polled, as the channel's
 * trailers are).  --validate checks every byte of every message. */
#ifndef IBC_CHANNEL_SUITE_H
#define IBC_CHANNEL_SUITE_H

#include "suite/suite.h"

/* A host-MPI kernel: fn(ctx, sbuf, rbuf, bytes, window, stride) runs one
 * iteration and returns IBC_OK; rank 0's elapsed time is the sample.
 * window == 0: a ping-pong, rank 0 sends sbuf, rank 1 receives it into rbuf
 * and answers with its own sbuf, which rank 0 receives into rbuf.
 * window > 0: rank 0 sends window messages, message k from sbuf + k * stride,
 * rank 1 receives message k into rbuf + k * stride (stride 0: all from and
 * into one buffer), then an ack. */
struct ibc_channel_suite_fn {
	int (*fn)(void *ctx, void *sbuf, void *rbuf, size_t bytes, long window, size_t stride);
	void *ctx;
	int bw;    /* 1: a windowed bandwidth kernel */
};

extern const struct ibc_suite_def ibc_channel_suite;

struct ibc_suite_variant ibc_channel_suite_fn_variant(const char *name, const char *impl,
						      const char *desc,
						      const struct ibc_channel_suite_fn *fn);
/* The window of messages the bandwidth kernels stream at a size. */
long ibc_channel_suite_window(size_t bytes);

#endif
