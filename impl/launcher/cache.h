/* Node-level bulletin-board cache of a node launch agent (thesis ch. 3):
 * key -> value with LRU order and an optional memory bound (HCMAB-LRU).
 * Memory is counted as key + value + a fixed per-entry overhead. */
#ifndef IBC_LAUNCH_CACHE_H
#define IBC_LAUNCH_CACHE_H

#include <stddef.h>
#include <stdint.h>

enum ibc_launch_cache_policy {
	IBC_LAUNCH_CACHE_HCS = 0,   /* puts forwarded up at once, gets cached on the way down */
	IBC_LAUNCH_CACHE_HCMA,      /* puts aggregated per NLA and sent up with the fence */
	IBC_LAUNCH_CACHE_HCMAB,     /* HCMA + the root broadcasts every put at the fence */
	IBC_LAUNCH_CACHE_HCMAB_LRU, /* HCMAB with a memory bound, least recently used evicted */
	IBC_LAUNCH_CACHE_MAX_
};
extern const char *const ibc_launch_cache_names[]; /* NULL-terminated */

#define IBC_LAUNCH_CACHE_ENTRY_OVERHEAD 64

struct ibc_launch_cache_entry;

struct ibc_launch_cache {
	struct ibc_launch_cache_entry **bucket;
	size_t nbucket, count;
	struct ibc_launch_cache_entry *lru_head, *lru_tail; /* head = most recent */
	uint64_t bound;   /* bytes; 0 = unbounded */
	uint64_t mem, mem_hwm, evictions;
};

int ibc_launch_cache_init(struct ibc_launch_cache *c, uint64_t bound);
void ibc_launch_cache_fini(struct ibc_launch_cache *c);
/* Inserts or replaces; evicts least recently used entries to stay within
 * the bound (an entry larger than the bound is not cached). */
int ibc_launch_cache_put(struct ibc_launch_cache *c, const char *key, const void *val, size_t len);
/* Pointer to the value (valid until the next put) or NULL; marks it recent. */
const void *ibc_launch_cache_get(struct ibc_launch_cache *c, const char *key, size_t *len);

#endif
