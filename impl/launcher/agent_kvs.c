/* The node agent's bulletin board: put and get of keys through the tree
 * and the four cache policies (hcs, hcma, hcmab, hcmab-lru) that answer a
 * get from a node agent's cache. */
#include "launcher/agent_loop.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ bulletin board --- */

/* The n "key, value" pairs of a fence's aggregate into this NLA's cache:
 * at the root, and for HCMA* on the way up at every level ("after
 * populating the local cache", thesis ch. 3), so a get from the subtree
 * is answered here. */
void ibc_launch_bb_cache_pairs(struct ibc_launch_agent *a, const void *p, size_t len, uint32_t n)
{
	struct ibc_launch_rd kr;
	uint32_t i;

	ibc_launch_rd_init(&kr, p, len);
	for (i = 0; i < n && !kr.err; i++) {
		char *key = ibc_launch_rd_strdup(&kr);
		size_t vl;
		const void *v = ibc_launch_rd_bytes(&kr, &vl);

		if (key != NULL && v != NULL)
			ibc_launch_cache_put(&a->cache, key, v, vl);
		free(key);
	}
}

static void get_reply(struct ibc_launch_agent *a, struct ibc_launch_proc *p, const char *key, const void *v,
		      size_t len)
{
	(void)a;
	if (p->wait == IBC_LAUNCH_WAIT_PMIGET) {
		if (v != NULL)
			ibc_launch_proc_replyf(p, NULL, 0, "cmd=get_result rc=0 msg=success value=%.*s", (int)len,
				    (const char *)v);
		else
			ibc_launch_proc_replyf(p, NULL, 0, "cmd=get_result rc=-1 msg=key_%s_not_found", key);
	} else if (v != NULL) {
		ibc_launch_proc_replyf(p, v, len, "cmd=ibc_get_result rc=0 bytes=%zu", len);
	} else {
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=ibc_get_result rc=-1 bytes=0");
	}
	p->wait = IBC_LAUNCH_WAIT_NONE;
}

static void child_get_reply(struct ibc_launch_agent *a, int ch, const char *key, const void *v, size_t len)
{
	struct ibc_launch_buf b = { 0 };

	ibc_launch_buf_put_str(&b, key);
	ibc_launch_buf_put_bytes(&b, v, v ? len : 0);
	ibc_launch_link_send(a, &a->child[ch], IBC_LAUNCH_MSG_GET_RESP, 0, 0, 0, v != NULL, ibc_launch_buf_head(&b),
		  ibc_launch_buf_avail(&b));
	ibc_launch_buf_free(&b);
}

/* A get from a local process (proc >= 0) or a child link (child >= 0). */
void ibc_launch_bb_get(struct ibc_launch_agent *a, const char *key, int proc, int child)
{
	size_t len = 0;
	const void *v = ibc_launch_cache_get(&a->cache, key, &len);
	struct ibc_launch_getwait *w, *x;
	int asked = 0;

	a->ctr.gets++;
	if (v != NULL || a->me == 0) {
		if (v != NULL)
			a->ctr.hits++;
		else
			a->ctr.misses++;
		if (proc >= 0)
			get_reply(a, &a->proc[proc], key, v, len);
		else
			child_get_reply(a, child, key, v, len);
		return;
	}
	a->ctr.misses++;
	for (x = a->gets; x; x = x->next)
		if (strcmp(x->key, key) == 0)
			asked = 1;
	w = calloc(1, sizeof(*w));
	if (w == NULL || (w->key = strdup(key)) == NULL) {
		free(w);
		ibc_launch_fail(a, -1, 1, "node agent out of memory");
		return;
	}
	w->proc = proc;
	w->child = child;
	w->next = a->gets;
	a->gets = w;
	if (!asked) {
		struct ibc_launch_buf b = { 0 };

		ibc_launch_buf_put_str(&b, key);
		ibc_launch_parent_send(a, IBC_LAUNCH_MSG_GET_REQ, 0, 0, 0, 0, ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b));
		ibc_launch_buf_free(&b);
	}
}

void ibc_launch_bb_on_get_resp(struct ibc_launch_agent *a, const struct ibc_launch_hdr *h, const unsigned char *pl)
{
	struct ibc_launch_rd rd;
	char *key;
	size_t vl;
	const void *v;
	struct ibc_launch_getwait **pp = &a->gets;

	ibc_launch_rd_init(&rd, pl, h->len);
	key = ibc_launch_rd_strdup(&rd);
	v = ibc_launch_rd_bytes(&rd, &vl);
	if (key == NULL || rd.err) {
		free(key);
		ibc_launch_fail(a, -1, 1, "malformed GET_RESP at node agent %d", a->me);
		return;
	}
	if (!h->aux)
		v = NULL;
	if (v != NULL)
		ibc_launch_cache_put(&a->cache, key, v, vl);
	while (*pp) {
		struct ibc_launch_getwait *w = *pp;

		if (strcmp(w->key, key) == 0) {
			*pp = w->next;
			if (w->proc >= 0)
				get_reply(a, &a->proc[w->proc], key, v, vl);
			else
				child_get_reply(a, w->child, key, v, vl);
			free(w->key);
			free(w);
		} else {
			pp = &w->next;
		}
	}
	free(key);
}

/* A put from a local process. */
void ibc_launch_bb_put(struct ibc_launch_agent *a, const char *key, const void *v, size_t len)
{
	a->ctr.puts++;
	ibc_launch_cache_put(&a->cache, key, v, len);
	if (a->me == 0)
		return;
	if (a->job.cache == IBC_LAUNCH_CACHE_HCS) {
		struct ibc_launch_buf b = { 0 };

		ibc_launch_buf_put_str(&b, key);
		ibc_launch_buf_put_bytes(&b, v, len);
		ibc_launch_parent_send(a, IBC_LAUNCH_MSG_PUT, 0, 0, 0, 0, ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b));
		ibc_launch_buf_free(&b);
	} else {
		ibc_launch_buf_put_str(&a->kvpend, key);
		ibc_launch_buf_put_bytes(&a->kvpend, v, len);
		a->nkvpend++;
	}
}

void ibc_launch_bb_on_put(struct ibc_launch_agent *a, const struct ibc_launch_hdr *h, const unsigned char *pl)
{
	struct ibc_launch_rd rd;
	char *key;
	size_t vl;
	const void *v;

	ibc_launch_rd_init(&rd, pl, h->len);
	key = ibc_launch_rd_strdup(&rd);
	v = ibc_launch_rd_bytes(&rd, &vl);
	if (key == NULL || v == NULL) {
		free(key);
		ibc_launch_fail(a, -1, 1, "malformed PUT at node agent %d", a->me);
		return;
	}
	ibc_launch_cache_put(&a->cache, key, v, vl);
	if (a->me != 0)
		ibc_launch_parent_send(a, IBC_LAUNCH_MSG_PUT, 0, 0, 0, 0, pl, h->len);
	free(key);
}
