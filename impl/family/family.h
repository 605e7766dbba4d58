/* What every collective family (impl/barrier, impl/alltoall, impl/channel)
 * shares: the live-instance registry, the wr_id layout, one completion
 * router for every family on a transport, the wait tick (family_wait.c) and
 * the two-sided receive pool (family_recv.h).
 *
 * An instance (a barrier, an all-to-all, a channel, a receive pool) embeds
 * a struct ibc_family_member and registers it: the registry gives it an
 * index, which its WRs carry in their wr_id:
 *
 *   tag byte 0xFA | instance (16 bits) | kind (8 bits) | index (32 bits)
 *
 * kind and index are the owner's.  ibc_family_service polls a transport's
 * queue and hands each completion to its owner's handler, whatever its
 * family, so instances of several families can share one transport.
 *
 * A completion of an instance that has gone away (a late one, e.g. a
 * retransmitted multicast release that reached a destroyed RGM instance's
 * queue) is dropped and counted for the family of the instance that held
 * the index last (ibc_family_kind.dropped); a completion whose wr_id is not
 * of this layout is dropped with a warning.
 *
 * Not thread-safe (neither are the families). */
#ifndef IBC_FAMILY_H
#define IBC_FAMILY_H

#include "xport/xport.h"

#include <stdint.h>

#define IBC_FAMILY_WRID_TAG 0xFAull
#define IBC_FAMILY_MAX_LIVE 8192

/* A family: its name (for logs) and its count of late completions dropped. */
struct ibc_family_kind {
	const char *name;
	uint64_t dropped;
};

/* Hands one completion of the owner to it.  A non-OK return is an error the
 * caller of ibc_family_service must see (e.g. a failed receive of a pool);
 * an owner's own errors go to its own failed status. */
typedef int (*ibc_family_wc_fn)(void *owner, const struct ibc_xport_wc *wc, unsigned kind,
				uint32_t index);

struct ibc_family_member {
	int live;                     /* registry index; -1 when not registered */
};

/* One registry slot (the router's one lookup). */
struct ibc_family_slot {
	ibc_family_wc_fn wc;
	void *owner;                  /* NULL: free (or its owner has gone) */
	struct ibc_family_kind *kind; /* the family of the owner, or of the last one */
};

extern struct ibc_family_slot ibc_family_live[IBC_FAMILY_MAX_LIVE];

/* Registers owner (lowest free index); IBC_ERR_NOMEM (logged) when full. */
int ibc_family_add(struct ibc_family_member *m, struct ibc_family_kind *kind,
		   ibc_family_wc_fn wc, void *owner);
/* Unregisters (no-op when not registered). */
void ibc_family_remove(struct ibc_family_member *m);

static inline uint64_t ibc_family_wrid(const struct ibc_family_member *m, unsigned kind,
				       uint32_t index)
{
	return (IBC_FAMILY_WRID_TAG << 56) | ((uint64_t)((unsigned)m->live & 0xffff) << 40) |
	       ((uint64_t)(kind & 0xff) << 32) | index;
}

/* The owner of a registry index, or NULL. */
static inline void *ibc_family_owner(unsigned live)
{
	return live < IBC_FAMILY_MAX_LIVE ? ibc_family_live[live].owner : NULL;
}

/* Routes one completion to its owner: 1 when handled (*rc = the handler's
 * return), 2 when its owner has gone (dropped, counted for the family),
 * 0 when its wr_id is not of this layout (nothing done). */
static inline int ibc_family_dispatch(const struct ibc_xport_wc *wc, int *rc)
{
	uint64_t id = wc->wr_id;
	unsigned slot = (unsigned)((id >> 40) & 0xffff);
	const struct ibc_family_slot *e;

	*rc = 0;
	if ((id >> 56) != IBC_FAMILY_WRID_TAG || slot >= IBC_FAMILY_MAX_LIVE)
		return 0;
	e = &ibc_family_live[slot];
	if (e->owner == NULL) {
		if (e->kind == NULL)
			return 0; /* never used */
		e->kind->dropped++;
		return 2;
	}
	*rc = e->wc(e->owner, wc, (unsigned)((id >> 32) & 0xff), (uint32_t)id);
	return 1;
}

/* The same, not inline, with the late completion logged: 1 when it was of
 * an instance (handled or dropped as late), else 0. */
int ibc_family_route(const struct ibc_xport_wc *wc, int *rc);

/* Polls cq of x once (up to 16 completions, never blocks) and routes each
 * to its owner; a completion of no family is dropped with a warning.
 * Returns a poll error, else the first non-OK handler return, else IBC_OK. */
int ibc_family_service(struct ibc_xport *x, int cq);

/* A wait loop's tick (family_wait.c): relax per x->wait; every
 * service_every polls (a power of 2; 0 = never) service the completion
 * queues (CQ_ANY) and every progress_every polls (a power of 2) make the
 * transport progress (its hooks run there); now and then check the
 * deadline and the job's abort (IBC_ERR_TIMEOUT, not logged: the caller
 * knows what it waited for, or IBC_ERR_INTERRUPTED). */
struct ibc_family_waiter {
	unsigned long polls;
	struct ibc_wait_deadline dl;
	unsigned service_every, progress_every;
};
#define IBC_FAMILY_WAITER(deadline_ns, service, progress)                                 \
	((struct ibc_family_waiter){ 0, IBC_WAIT_DEADLINE(deadline_ns), (service), (progress) })
int ibc_family_tick(struct ibc_xport *x, struct ibc_family_waiter *w);
/* Logs a wait's timeout, "<family> <alg> rank <rank>: <unit> <seq>: no
 * <what> from rank <peer> after <deadline_s> s", and returns
 * IBC_ERR_TIMEOUT: the families' ticks call it on the cold path. */
int ibc_family_timeout(const char *family, const char *alg, int rank, const char *unit,
		       unsigned long long seq, const char *what, int peer, double deadline_s);

#endif
