/* single bootstrap: one process, no peers.  Collectives are copies; the
 * bulletin board is a private list. */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

struct kv {
	struct kv *next;
	char *key;
	size_t len;
	unsigned char val[];
};

struct single {
	struct ibc_boot boot;
	struct kv *kv;
};

static int single_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{
	(void)b;
	if (len > 0 && send != recv)
		memmove(recv, send, len);
	return IBC_OK;
}

static int single_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	if (root != 0) {
		ibc_error("boot single: gather root %d out of range (size 1)", root);
		return IBC_ERR_INVAL;
	}
	return single_allgather(b, send, recv, len);
}

static int single_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{
	(void)b;
	(void)buf;
	(void)len;
	if (root != 0) {
		ibc_error("boot single: bcast root %d out of range (size 1)", root);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

static int single_barrier(struct ibc_boot *b)
{
	(void)b;
	return IBC_OK;
}

static struct kv *kv_find(struct single *s, const char *key)
{
	struct kv *e;

	for (e = s->kv; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static int single_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{
	struct single *s = b->priv;
	struct kv *e, **pp;

	e = malloc(sizeof(*e) + len);
	if (e == NULL)
		return IBC_ERR_NOMEM;
	e->key = strdup(key);
	if (e->key == NULL) {
		free(e);
		return IBC_ERR_NOMEM;
	}
	e->len = len;
	if (len > 0)
		memcpy(e->val, val, len);
	/* replace an older value of the same key */
	for (pp = &s->kv; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->key, key) == 0) {
			struct kv *old = *pp;

			e->next = old->next;
			*pp = e;
			free(old->key);
			free(old);
			return IBC_OK;
		}
	}
	e->next = s->kv;
	s->kv = e;
	return IBC_OK;
}

static int single_fence(struct ibc_boot *b)
{
	(void)b;
	return IBC_OK;
}

static int single_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{
	struct kv *e = kv_find(b->priv, key);

	if (e == NULL)
		return IBC_ERR_NOTFOUND;
	if (len != NULL)
		*len = e->len;
	if (e->len > cap) {
		ibc_error("boot single: value of '%s' has %zu bytes, buffer %zu", key, e->len, cap);
		return IBC_ERR_INVAL;
	}
	if (e->len > 0)
		memcpy(val, e->val, e->len);
	return IBC_OK;
}

static void single_abort(struct ibc_boot *b, int code, const char *why)
{
	(void)b;
	ibc_error("boot single: abort (code %d): %s", code, why ? why : "");
}

static int single_close(struct ibc_boot *b)
{
	struct single *s = b->priv;
	struct kv *e, *next;

	for (e = s->kv; e != NULL; e = next) {
		next = e->next;
		free(e->key);
		free(e);
	}
	free(s);
	return IBC_OK;
}

static const struct ibc_boot_ops single_ops = {
	.name = "single",
	.allgather = single_allgather,
	.gather = single_gather,
	.bcast = single_bcast,
	.barrier = single_barrier,
	.put = single_put,
	.fence = single_fence,
	.get = single_get,
	.abort = single_abort,
	.close = single_close,
};

int ibc_boot_single_open(struct ibc_boot **out)
{
	struct single *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s == NULL)
		return IBC_ERR_NOMEM;
	s->boot.ops = &single_ops;
	s->boot.rank = 0;
	s->boot.size = 1;
	s->boot.local_rank = 0;
	s->boot.local_size = 1;
	s->boot.node_id = 0;
	s->boot.num_nodes = 1;
	s->boot.priv = s;
	*out = &s->boot;
	return IBC_OK;
}
