/* The two-sided receive pool: one per transport, shared by every instance
 * of every family that receives two-sided messages on it.
 *
 * The receives of one connection are consumed in order, whoever posted
 * them, so the receive buffers of a transport belong to one pool: D slots
 * per source, each of the pool's slot size.  Every message starts with an
 * ibc_family_recv_hdr naming the tag of the instance it is for (tags are
 * handed out at the collective joins, so they agree across ranks); the
 * pool's completion handler gives the slot to that instance's receive
 * function, which reads it at once (the slot is posted again) or keeps it
 * until it has read it (ibc_family_recv_repost).  A posted buffer cannot be
 * taken back from a queue: when the last instance leaves (collective,
 * nothing in flight), every rank sends each peer exactly as many drain
 * messages as that peer has slots posted for it, so the queues are empty
 * before the memory goes.  The first instance to join sizes the slots
 * (rounded up to 64 bytes, at least IBC_FAMILY_RECV_MIN_SLOT). */
#ifndef IBC_FAMILY_RECV_H
#define IBC_FAMILY_RECV_H

#include "family/family.h"

#include <stddef.h>
#include <stdint.h>

#define IBC_FAMILY_RECV_DEPTH 16   /* slots per source */
#define IBC_FAMILY_RECV_TAGS 256   /* instances in one pool at once */
#define IBC_FAMILY_RECV_MIN_SLOT 64 /* bytes: every family's headers fit */

struct ibc_family_recv;

/* The first 8 bytes of every message through a pool. */
struct ibc_family_recv_hdr {
	uint32_t tag;   /* the receiving instance's (ibc_family_recv_join) */
	uint32_t user;  /* the family's */
};

/* A message for owner from peer in slot k (len bytes at msg): returns 1
 * when owner keeps the slot (and reposts it later), 0 to post it again now. */
typedef int (*ibc_family_recv_fn)(void *owner, int peer, int k, const void *msg, uint32_t len);

/* Joins x's pool (opened with slots of slot_bytes when none is open) and
 * posts D slots for each source (NULL: every peer) that has none yet; *tag
 * goes in the owner's messages.  Collective: joins and leaves happen in the
 * same order everywhere.  The caller makes sure every rank has posted
 * before anyone sends (e.g. a bootstrap barrier). */
int ibc_family_recv_join(struct ibc_xport *x, size_t slot_bytes, const uint8_t *sources,
			 ibc_family_recv_fn fn, void *owner, struct ibc_family_recv **pool,
			 uint32_t *tag);
/* Leaves; the last to leave drains the queues (waiting up to deadline_ns)
 * and frees the pool, unless ok is 0 (a failed instance: its buffers may
 * still be posted, the pool stays).  Collective. */
int ibc_family_recv_leave(struct ibc_family_recv *pool, uint32_t tag, int ok,
			  int64_t deadline_ns);
size_t ibc_family_recv_slot_bytes(const struct ibc_family_recv *pool);
void *ibc_family_recv_slot(const struct ibc_family_recv *pool, int peer, int k);
/* Posts slot k of peer again (after its owner has read it). */
int ibc_family_recv_repost(struct ibc_family_recv *pool, int peer, int k);

#endif
