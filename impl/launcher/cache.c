/* Hash map + LRU list for the node-level caches (cache.h). */
#include "launcher/cache.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

const char *const ibc_launch_cache_names[] = { "hcs", "hcma", "hcmab", "hcmab-lru", NULL };

struct ibc_launch_cache_entry {
	struct ibc_launch_cache_entry *hnext, *prev, *next;
	char *key;
	void *val;
	size_t len;
	uint64_t hash;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static uint64_t entry_mem(const struct ibc_launch_cache_entry *e)
{
	return strlen(e->key) + e->len + IBC_LAUNCH_CACHE_ENTRY_OVERHEAD;
}

int ibc_launch_cache_init(struct ibc_launch_cache *c, uint64_t bound)
{
	memset(c, 0, sizeof(*c));
	c->nbucket = 1024;
	c->bucket = calloc(c->nbucket, sizeof(*c->bucket));
	c->bound = bound;
	return c->bucket ? IBC_OK : IBC_ERR_NOMEM;
}

static void lru_unlink(struct ibc_launch_cache *c, struct ibc_launch_cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_front(struct ibc_launch_cache *c, struct ibc_launch_cache_entry *e)
{
	e->prev = NULL;
	e->next = c->lru_head;
	if (c->lru_head)
		c->lru_head->prev = e;
	c->lru_head = e;
	if (c->lru_tail == NULL)
		c->lru_tail = e;
}

static void entry_remove(struct ibc_launch_cache *c, struct ibc_launch_cache_entry *e)
{
	struct ibc_launch_cache_entry **pp = &c->bucket[e->hash % c->nbucket];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	lru_unlink(c, e);
	c->mem -= entry_mem(e);
	c->count--;
	free(e->key);
	free(e->val);
	free(e);
}

void ibc_launch_cache_fini(struct ibc_launch_cache *c)
{
	while (c->lru_head)
		entry_remove(c, c->lru_head);
	free(c->bucket);
	memset(c, 0, sizeof(*c));
}

static struct ibc_launch_cache_entry *lookup(struct ibc_launch_cache *c, const char *key, uint64_t h)
{
	struct ibc_launch_cache_entry *e;

	for (e = c->bucket[h % c->nbucket]; e; e = e->hnext)
		if (e->hash == h && strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

int ibc_launch_cache_put(struct ibc_launch_cache *c, const char *key, const void *val, size_t len)
{
	uint64_t h = hash_str(key);
	struct ibc_launch_cache_entry *e = lookup(c, key, h);
	uint64_t need = strlen(key) + len + IBC_LAUNCH_CACHE_ENTRY_OVERHEAD;

	if (e != NULL)
		entry_remove(c, e);
	if (c->bound > 0 && need > c->bound)
		return IBC_OK;
	while (c->bound > 0 && c->mem + need > c->bound && c->lru_tail != NULL) {
		entry_remove(c, c->lru_tail);
		c->evictions++;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return IBC_ERR_NOMEM;
	e->key = strdup(key);
	e->val = malloc(len ? len : 1);
	if (e->key == NULL || e->val == NULL) {
		free(e->key);
		free(e->val);
		free(e);
		return IBC_ERR_NOMEM;
	}
	memcpy(e->val, val, len);
	e->len = len;
	e->hash = h;
	e->hnext = c->bucket[h % c->nbucket];
	c->bucket[h % c->nbucket] = e;
	lru_push_front(c, e);
	c->count++;
	c->mem += need;
	if (c->mem > c->mem_hwm)
		c->mem_hwm = c->mem;
	return IBC_OK;
}

const void *ibc_launch_cache_get(struct ibc_launch_cache *c, const char *key, size_t *len)
{
	struct ibc_launch_cache_entry *e = lookup(c, key, hash_str(key));

	if (e == NULL)
		return NULL;
	lru_unlink(c, e);
	lru_push_front(c, e);
	*len = e->len;
	return e->val;
}
