/* The logp kernels rtt-pool-1n and xchg-pool: RTT(p) 1:n, and an exchange
 * of messages between pairs of ranks, over the two-sided path that
 * ibchar's collectives send on (impl/family's receive pool), not the bare
 * transport's send and receive that rtt-send-1n times.
 *
 * A message is the pool's header and m bytes, sent inline where it fits,
 * signaled; it is received through the pool: the completion routed to the
 * pool, handed to this kernel's receive function by the header's tag, and
 * its slot posted again at once, all on the timed path, as PE, DS and the
 * two-sided all-to-alls pay it; a send's completion is handled when it
 * comes, while the answer is awaited, as theirs are (rtt-send-1n reaps it
 * after the sample).  Rank 0 sends to peers 1..p and waits for their
 * answers.
 *
 * The receives of a connection are consumed in order, whoever posted them,
 * so a pool cannot share a transport with the suite's other kernels, which
 * post their own receives: the kernel's instances (one per p) share a
 * transport of their own, like the suite's, opened by the first and closed
 * by the last (collective). */
#ifndef IBC_LOGP_POOL_H
#define IBC_LOGP_POOL_H

#include "boot/boot.h"
#include "xport/xport.h"

#include <stddef.h>
#include <stdint.h>

struct ibc_logp_pool;

/* An instance of kernel name (its messages say it) with p peers (1..N-1)
 * and m-byte messages: opens the kernel's transport (as like's) if no
 * instance has it open, and joins its pool.  Collective. */
int ibc_logp_pool_open(struct ibc_boot *boot, const struct ibc_xport *like, const char *name,
		       size_t m, int p, int validate, struct ibc_logp_pool **out);
/* The payload this rank sends to peer (m bytes, filled by the caller before
 * a validated iteration), and the iteration whose messages the receive
 * function checks against the pattern of (sender, this rank, iter, 0). */
unsigned char *ibc_logp_pool_payload(struct ibc_logp_pool *q, int peer);
void ibc_logp_pool_iter_set(struct ibc_logp_pool *q, long iter);
/* One round trip: rank 0's time per peer in *us (0 elsewhere). */
int ibc_logp_pool_rtt(struct ibc_logp_pool *q, double *us);
/* One exchange (xchg-pool): ranks r and r ^ 1 send each other a message at
 * once and each awaits the other's (the last rank of an odd N idles); this
 * rank's time from its send to the partner's message in, in *us (NULL:
 * untimed, as back to back, where the loop times it). */
int ibc_logp_pool_xchg(struct ibc_logp_pool *q, double *us);
/* Wrong bytes received so far (validated), and where the first was. */
uint64_t ibc_logp_pool_bad(const struct ibc_logp_pool *q, long *iter, int *from, size_t *off);
/* Leaves the pool; the last instance closes the transport.  Collective. */
int ibc_logp_pool_close(struct ibc_logp_pool *q);

#endif
