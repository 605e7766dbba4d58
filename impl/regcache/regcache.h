/* A registration cache over one transport (MVAPICH's "registration cache",
 * Sur et al. §4, §5.4): user buffers are registered once and found again.
 *
 *   ibc_regcache_open(x, 0, &c);
 *   ibc_regcache_get(c, buf, len, IBC_XPORT_ACCESS_ALL, &mr, &hit);  use mr->lkey,
 *       mr->rdesc; an entry that covers [buf, buf+len) with the access asked
 *       for is a hit, else the range is registered (ibc_xport_mr_reg: on verbs
 *       a real ibv_reg_mr) and kept;
 *   ibc_regcache_put(c, mr);           the caller is done with it (the entry stays);
 *   ibc_regcache_invalidate(c, buf, len);  before the memory is freed: every
 *       entry that overlaps it is deregistered (a later get of a new buffer at
 *       the same address is a miss, never a stale registration);
 *   ibc_regcache_close(c).
 *
 * Entries hold a reference count; unreferenced ones beyond the capacity are
 * evicted least recently used first.  Invalidating a range that a caller
 * still holds is an error (IBC_ERR_INVAL, logged), not a silent deregistration.  The
 * cache does not watch free() or munmap(): its owners invalidate (the
 * all-to-all suite does so before it frees a point's buffers).  One thread. */
#ifndef IBC_REGCACHE_H
#define IBC_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

struct ibc_xport;
struct ibc_xport_mr;
struct ibc_regcache;

struct ibc_regcache_stats {
	uint64_t hits, misses;
	uint64_t evictions;       /* unreferenced entries dropped for capacity */
	uint64_t invalidations;   /* entries dropped by ibc_regcache_invalidate */
	uint64_t entries;         /* live */
	uint64_t bytes;           /* registered by live entries */
	double reg_us;            /* time spent registering (misses), microseconds */
};

/* cap = most entries kept (0 = 256).  When the transport refuses a new
 * registration for lack of room (IBC_ERR_NOMEM), the least recently used
 * entry nobody holds is deregistered and the registration tried again. */
int ibc_regcache_open(struct ibc_xport *x, size_t cap, struct ibc_regcache **out);
/* Deregisters every entry (referenced ones too) and frees c; NULL is fine. */
int ibc_regcache_close(struct ibc_regcache *c);
/* *hit (may be NULL) = 1 on a hit. */
int ibc_regcache_get(struct ibc_regcache *c, void *addr, size_t len, unsigned access,
		     struct ibc_xport_mr **mr, int *hit);
void ibc_regcache_put(struct ibc_regcache *c, struct ibc_xport_mr *mr);
int ibc_regcache_invalidate(struct ibc_regcache *c, const void *addr, size_t len);
void ibc_regcache_stats_get(const struct ibc_regcache *c, struct ibc_regcache_stats *out);

#endif
