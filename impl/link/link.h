/* The link suite: perftest-equivalent kernels between ranks 0 and 1 over any
 * transport, on the suite driver (impl/suite):
 *
 *   write-lat           RDMA-write ping-pong with an ordered flag: payload write +
 *                       8-byte sequence flag (one post list of two WRs, the flag
 *                       inline when it fits, signaled); the receiver waits on the
 *                       flag, which the transport orders after the payload, then
 *                       answers the same way; one-way = round trip / 2;
 *   write-lat-lastbyte  measured as perftest's ib_write_lat measures: one write
 *                       (inline when it fits, signaled, its completion reaped
 *                       right after the post), the receiver polls the last byte
 *                       of the payload for this round's counter.  Correct only
 *                       where the last byte of a write lands last, which verbs
 *                       does not promise (rxe and the usual HCAs do it); hence
 *                       the name;
 *   write-lat-imm       the payload as one RDMA write with immediate; the receiver
 *                       waits for its receive completion, which the transport
 *                       orders after the data: ordered like write-lat, one
 *                       packet per direction like write-lat-lastbyte;
 *   read-lat            RDMA read of the size from the peer, until its completion;
 *   send-lat            send/receive ping-pong (receives posted ahead);
 *   write-bw-burst      one burst per iteration: a window of writes posted as one
 *                       list, the last signaled, until its completion; the row's
 *                       time is per message, extra holds window= and MBps=;
 *   write-bw-stream     measured as ib_write_bw measures: per iteration a stream of
 *                       16 windows of messages (64 MiB at most) with --window
 *                       writes in flight, every cq_mod-th signaled
 *                       (100, or 1 above 8 KiB, as perftest) and completions reaped
 *                       as they come; time per message, MBps= in extra.
 *
 * With --perftest (verbs, both ranks on one node) the reference tools run too,
 * as impl=perftest rows of the variant they measure like: ib_write_lat
 * (write-lat-lastbyte; every one-way sample it prints with -U is a sample of
 * the row) and ib_write_bw (write-bw-stream; its average bandwidth, one
 * figure: n=1, no spread).  ibchar's rows get factor_vs_write_lat_lastbyte_
 * perftest and factor_vs_write_bw_stream_perftest (perftest's time / ours).
 * A perftest that cannot calibrate its clock on a busy host gets up to 4
 * tries per point and is then skipped with the reason. */
#ifndef IBC_LINK_H
#define IBC_LINK_H

#include "suite/suite.h"

#define IBC_LINK_MAX_WINDOW 1024 /* write-bw-*: largest window */

extern const struct ibc_suite_def ibc_link_suite;

#endif
