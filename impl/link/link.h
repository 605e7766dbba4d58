/* Link-level kernels between ranks 0 and 1 over any transport
 * (perftest-equivalent), as harness operations:
 *
 *   write-lat  RDMA-write ping-pong: payload write + 8-byte sequence flag (one post
 *              list of two WRs; the flag inline when it fits); the receiver waits on
 *              the flag, then answers the same way; one-way = round trip / 2;
 *   read-lat   RDMA read of the size from the peer, until its completion;
 *   send-lat   send/receive ping-pong (receives posted ahead); one-way = RTT / 2;
 *   write-bw   a window of writes posted as one list, the last one signaled, until
 *              its completion; the row's time is per message, extra holds window=
 *              and MBps= (from the median window time).
 *
 * With params.perftest, two more operations with impl "perftest" (write-lat,
 * write-bw; verbs, both ranks on one node): during the point's setup rank 1
 * runs perftest's ib_write_lat / ib_write_bw server and rank 0 the client
 * (perftest.h); write-lat rows replay every one-way sample perftest prints
 * with -U, write-bw rows its average bandwidth as time per message.  At
 * other points (another transport, several nodes, 0 bytes, perftest
 * missing) they are skipped.
 *
 *   struct ibc_link_params lp = { .max_bytes = 4 << 20, .window = 64 };
 *   ibc_link_open(x, &lp, &l);                       (collective; x connected)
 *   n = ibc_link_ops_build(l, ops, IBC_LINK_MAX_OPS);
 *   ibc_link_probe_set(l, &hp);                      (verbs: the xport ping-pong)
 *   ibc_harness_run(boot, &hp, ops, n);
 *   ibc_link_close(l);                               (before ibc_xport_close)
 *
 * The operations need exactly two ranks. */
#ifndef IBC_LINK_H
#define IBC_LINK_H

#include <stddef.h>

struct ibc_xport;
struct ibc_link;
struct ibc_harness_op;
struct ibc_harness_params;

#define IBC_LINK_MAX_WINDOW 1024 /* write-bw: largest window */
#define IBC_LINK_MAX_OPS 6       /* operations ibc_link_ops_build may return */

struct ibc_link_params {
	size_t max_bytes;  /* the largest message of the run (sizes the buffers) */
	long window;       /* write-bw: writes in flight, 1..IBC_LINK_MAX_WINDOW */
	int perftest;      /* 1: also the impl=perftest operations */
};

/* The variants (write-lat, read-lat, send-lat, write-bw), for listing and
 * selection; the perftest operations reuse two of these names. */
size_t ibc_link_variant_count(void);
const char *ibc_link_variant_name(size_t i);

/* Collective over x's ranks: registers the buffers, exchanges their
 * descriptors and agrees on perftest's first TCP port. */
int ibc_link_open(struct ibc_xport *x, const struct ibc_link_params *p, struct ibc_link **out);
/* Fills ops (cap >= IBC_LINK_MAX_OPS) with every operation, in the order of
 * the variants, then the perftest ones; returns how many.  The operations
 * point into l. */
size_t ibc_link_ops_build(struct ibc_link *l, struct ibc_harness_op *ops, size_t cap);
/* On verbs, the placement probe becomes the transport's own 8-byte write
 * ping-pong (ibc_xport_pingpong); elsewhere hp keeps the harness's. */
void ibc_link_probe_set(struct ibc_link *l, struct ibc_harness_params *hp);
/* Deregisters and frees (not collective); l may be NULL. */
void ibc_link_close(struct ibc_link *l);

#endif
