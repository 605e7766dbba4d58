/* The registration cache (regcache.h): a list of entries, most recently
 * used first.  Linear search: the suites hold a few entries per buffer. */
#include "regcache/regcache.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "xport/xport.h"

#include <stdlib.h>

struct rc_entry {
	struct rc_entry *prev, *next;
	uintptr_t lo, hi;           /* [lo, hi) */
	unsigned access;
	int refs;
	struct ibc_xport_mr *mr;
};

struct ibc_regcache {
	struct ibc_xport *x;
	size_t cap;
	struct rc_entry *head;      /* most recently used */
	struct ibc_regcache_stats st;
};

int ibc_regcache_open(struct ibc_xport *x, size_t cap, struct ibc_regcache **out)
{
	struct ibc_regcache *c;

	if (x == NULL || out == NULL)
		return IBC_ERR_INVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return IBC_ERR_NOMEM;
	c->x = x;
	c->cap = cap > 0 ? cap : 256;
	*out = c;
	return IBC_OK;
}

static void unlink_entry(struct ibc_regcache *c, struct rc_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct ibc_regcache *c, struct rc_entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
}

static int drop(struct ibc_regcache *c, struct rc_entry *e)
{
	int rc;

	unlink_entry(c, e);
	c->st.entries--;
	c->st.bytes -= e->hi - e->lo;
	rc = ibc_xport_mr_dereg(c->x, e->mr);
	free(e);
	return rc;
}

int ibc_regcache_close(struct ibc_regcache *c)
{
	int rc = IBC_OK, r;

	if (c == NULL)
		return IBC_OK;
	while (c->head) {
		r = drop(c, c->head);
		if (rc == IBC_OK)
			rc = r;
	}
	free(c);
	return rc;
}

/* Evicts unreferenced entries, least recently used first, down to cap - 1. */
static int make_room(struct ibc_regcache *c)
{
	struct rc_entry *e = c->head, *last = NULL;

	while (e) {
		last = e;
		e = e->next;
	}
	while (c->st.entries >= c->cap && last) {
		struct rc_entry *prev = last->prev;

		if (last->refs == 0) {
			int rc = drop(c, last);

			c->st.evictions++;
			if (rc)
				return rc;
		}
		last = prev;
	}
	return IBC_OK;
}

int ibc_regcache_get(struct ibc_regcache *c, void *addr, size_t len, unsigned access,
		     struct ibc_xport_mr **mr, int *hit)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	struct rc_entry *e;
	double t0;
	int rc;

	if (c == NULL || addr == NULL || len == 0 || mr == NULL)
		return IBC_ERR_INVAL;
	for (e = c->head; e; e = e->next) {
		if (e->lo <= lo && hi <= e->hi && (e->access & access) == access) {
			unlink_entry(c, e);
			push_front(c, e);
			e->refs++;
			c->st.hits++;
			if (hit)
				*hit = 1;
			*mr = e->mr;
			return IBC_OK;
		}
	}
	rc = make_room(c);
	if (rc)
		return rc;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return IBC_ERR_NOMEM;
	for (;;) {
		struct rc_entry *v, *lru = NULL;

		t0 = ibc_timer_now_us();
		rc = ibc_xport_mr_reg(c->x, addr, len, access, &e->mr);
		c->st.reg_us += ibc_timer_now_us() - t0;
		if (rc != IBC_ERR_NOMEM)
			break;
		/* the transport's or the device's registrations are used up:
		 * give back the least recently used entry nobody holds, and retry */
		for (v = c->head; v; v = v->next)
			if (v->refs == 0)
				lru = v;
		if (lru == NULL)
			break;
		rc = drop(c, lru);
		c->st.evictions++;
		if (rc)
			break;
	}
	if (rc) {
		free(e);
		return rc;
	}
	e->lo = lo;
	e->hi = hi;
	e->access = access;
	e->refs = 1;
	push_front(c, e);
	c->st.misses++;
	c->st.entries++;
	c->st.bytes += len;
	if (hit)
		*hit = 0;
	*mr = e->mr;
	return IBC_OK;
}

void ibc_regcache_put(struct ibc_regcache *c, struct ibc_xport_mr *mr)
{
	struct rc_entry *e;

	if (c == NULL || mr == NULL)
		return;
	for (e = c->head; e; e = e->next)
		if (e->mr == mr) {
			if (e->refs > 0)
				e->refs--;
			return;
		}
}

int ibc_regcache_invalidate(struct ibc_regcache *c, const void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	struct rc_entry *e, *next;
	int rc = IBC_OK, r;

	if (c == NULL)
		return IBC_ERR_INVAL;
	for (e = c->head; e; e = e->next)
		if (e->lo < hi && lo < e->hi && e->refs > 0) {
			ibc_error("regcache: invalidating [%p, +%zu) while a registration in it "
				  "is in use", addr, len);
			return IBC_ERR_INVAL;
		}
	for (e = c->head; e; e = next) {
		next = e->next;
		if (e->lo < hi && lo < e->hi) {
			r = drop(c, e);
			c->st.invalidations++;
			if (rc == IBC_OK)
				rc = r;
		}
	}
	return rc;
}

void ibc_regcache_stats_get(const struct ibc_regcache *c, struct ibc_regcache_stats *out)
{
	*out = c->st;
}
