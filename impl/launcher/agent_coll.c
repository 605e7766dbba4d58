/* The node agent's collectives: contributions gathered up the tree, the
 * root's result (barrier, gather, allgather, bcast, scatter, alltoall,
 * fence) and its distribution down to the local processes. */
#include "launcher/agent_loop.h"
#include "launcher/proto.h"
#include "core/log.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- collectives --- */

struct ibc_launch_coll *ibc_launch_agent_coll_find(struct ibc_launch_agent *a, uint32_t seq, int create)
{
	struct ibc_launch_coll *c;

	for (c = a->colls; c; c = c->next)
		if (c->seq == seq)
			return c;
	if (!create)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->seq = seq;
	c->op = -1;
	c->next = a->colls;
	a->colls = c;
	return c;
}

void ibc_launch_agent_coll_free(struct ibc_launch_agent *a, struct ibc_launch_coll *c)
{
	struct ibc_launch_coll **pp = &a->colls;

	while (*pp != c)
		pp = &(*pp)->next;
	*pp = c->next;
	ibc_launch_buf_free(&c->ent);
	ibc_launch_buf_free(&c->kv);
	free(c);
}

void ibc_launch_agent_coll_missing(struct ibc_launch_agent *a, char *out, size_t cap)
{
	struct ibc_launch_coll *c, *old = NULL;
	int np = (int)a->job.np, r, n, k, miss, more = 0;
	unsigned char *seen;
	struct ibc_launch_rd rd;
	const char *host, *last = NULL;
	size_t used;
	uint32_t i;

	out[0] = '\0';
	for (c = a->colls; c; c = c->next)
		if (old == NULL || c->seq < old->seq)
			old = c;
	if (old == NULL || np <= 0 || (seen = calloc((size_t)np, 1)) == NULL)
		return;
	ibc_launch_rd_init(&rd, ibc_launch_buf_head(&old->ent), ibc_launch_buf_avail(&old->ent));
	for (i = 0; i < old->nent; i++) {
		uint32_t rk = ibc_launch_rd_u32(&rd);
		size_t l;

		(void)ibc_launch_rd_bytes(&rd, &l);
		if (rd.err)
			break;
		if (rk < (uint32_t)np)
			seen[rk] = 1;
	}
	used = (size_t)snprintf(out, cap, "collective %u has %u of %d ranks; none yet from", old->seq, old->nent, np);
	/* the hosts of the missing ranks, each once with its count (ranks are
	 * in blocks per host) */
	for (r = 0; r < np && used < cap; r = n) {
		host = ibc_launch_host_of(a, r);
		for (n = r; n < np && ibc_launch_host_of(a, n) == host; n++)
			;
		for (miss = 0, k = r; k < n; k++)
			miss += !seen[k];
		if (miss == 0)
			continue;
		if (more++ >= 8) {
			used += (size_t)snprintf(out + used, cap - used, " ...");
			break;
		}
		used += (size_t)snprintf(out + used, cap - used, "%s %s (%d rank%s)", last != NULL ? "," : "", host,
					 miss, miss == 1 ? "" : "s");
		last = host;
	}
	free(seen);
}

void ibc_launch_agent_coll_stragglers(struct ibc_launch_agent *a)
{
	struct ibc_launch_coll *c, *old = NULL;
	int j;

	for (c = a->colls; c; c = c->next)
		if (c->nent > 0 && (old == NULL || c->seq < old->seq))
			old = c;
	if (old == NULL)
		return;
	for (j = 0; j < a->nproc; j++) {
		const struct ibc_launch_proc *p = &a->proc[j];

		if (!p->finished && p->coll_seq <= old->seq)
			ibc_error("launch: rank %d on %s never joined collective %u (%u rank%s had)", p->rank,
				  ibc_launch_host_of(a, p->rank), old->seq, old->nent, old->nent == 1 ? "" : "s");
	}
}

static int coll_expect(const struct ibc_launch_agent *a)
{
	return a->me == 0 ? (int)a->job.np : a->subtree_ranks;
}

/* Root: every contribution is in; compute and distribute the result. */

static void coll_finish_root(struct ibc_launch_agent *a, struct ibc_launch_coll *c)
{
	int np = (int)a->job.np, r, ok = 1;
	const unsigned char **data = calloc((size_t)np, sizeof(*data));
	size_t *len = calloc((size_t)np, sizeof(*len));
	struct ibc_launch_rd rd;
	struct ibc_launch_buf down = { 0 };
	uint32_t i;
	size_t blk = 0;
	char why[200] = "";

	if (data == NULL || len == NULL) {
		ibc_launch_fail(a, -1, 1, "launcher out of memory");
		goto out_free;
	}
	ibc_launch_rd_init(&rd, ibc_launch_buf_head(&c->ent), ibc_launch_buf_avail(&c->ent));
	for (i = 0; i < c->nent; i++) {
		uint32_t rk = ibc_launch_rd_u32(&rd);
		size_t l;
		const void *d = ibc_launch_rd_bytes(&rd, &l);

		if (rd.err || rk >= (uint32_t)np || data[rk] != NULL) {
			ok = 0;
			snprintf(why, sizeof(why), "duplicate or bad contribution");
			break;
		}
		data[rk] = d ? d : (const unsigned char *)"";
		len[rk] = l;
	}
	if (ok && c->nent != (uint32_t)np) {
		ok = 0;
		snprintf(why, sizeof(why), "%u of %d contributions", c->nent, np);
	}
	if (ok && (c->root < 0 || c->root >= np)) {
		ok = 0;
		snprintf(why, sizeof(why), "root %d out of range", c->root);
	}
	if (ok) {
		switch (c->op) {
		case IBC_LAUNCH_COLL_GATHER:
		case IBC_LAUNCH_COLL_ALLGATHER:
			for (r = 1; r < np && ok; r++)
				if (len[r] != len[0]) {
					ok = 0;
					snprintf(why, sizeof(why), "rank %d gives %zu bytes, rank 0 %zu", r, len[r], len[0]);
				}
			break;
		case IBC_LAUNCH_COLL_SCATTER:
			if (len[c->root] % (size_t)np != 0) {
				ok = 0;
				snprintf(why, sizeof(why), "scatter root gives %zu bytes, not a multiple of %d",
					 len[c->root], np);
			}
			blk = len[c->root] / (size_t)np;
			break;
		case IBC_LAUNCH_COLL_ALLTOALL:
			for (r = 0; r < np && ok; r++)
				if (len[r] != len[0] || len[r] % (size_t)np != 0) {
					ok = 0;
					snprintf(why, sizeof(why), "alltoall: rank %d gives %zu bytes", r, len[r]);
				}
			blk = len[0] / (size_t)np;
			break;
		default:
			break;
		}
	}
	if (!ok) {
		ibc_error("launch: collective %u (%s): %s", c->seq, ibc_launch_coll_name(c->op), why);
		ibc_launch_fail(a, -1, 1, "collective %s: %s", ibc_launch_coll_name(c->op), why);
		goto out_free;
	}
	switch (c->op) {
	case IBC_LAUNCH_COLL_GATHER:
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, (uint32_t)c->root);
		ibc_launch_buf_put_u32(&down, (uint32_t)(len[0] * (size_t)np));
		for (r = 0; r < np; r++)
			ibc_launch_buf_append(&down, data[r], len[r]);
		break;
	case IBC_LAUNCH_COLL_ALLGATHER:
		ibc_launch_buf_put_u32(&down, 0);
		ibc_launch_buf_put_u32(&down, (uint32_t)(len[0] * (size_t)np));
		for (r = 0; r < np; r++)
			ibc_launch_buf_append(&down, data[r], len[r]);
		break;
	case IBC_LAUNCH_COLL_BCAST:
		ibc_launch_buf_put_u32(&down, 0);
		ibc_launch_buf_put_bytes(&down, data[c->root], len[c->root]);
		break;
	case IBC_LAUNCH_COLL_SCATTER:
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, (uint32_t)np);
		for (r = 0; r < np; r++) {
			ibc_launch_buf_put_u32(&down, (uint32_t)r);
			ibc_launch_buf_put_bytes(&down, data[c->root] + (size_t)r * blk, blk);
		}
		break;
	case IBC_LAUNCH_COLL_ALLTOALL:
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, (uint32_t)np);
		for (r = 0; r < np; r++) {
			int s;

			ibc_launch_buf_put_u32(&down, (uint32_t)r);
			ibc_launch_buf_put_u32(&down, (uint32_t)(blk * (size_t)np));
			for (s = 0; s < np; s++)
				ibc_launch_buf_append(&down, data[s] + (size_t)r * blk, blk);
		}
		break;
	default: /* barrier, fence */
		ibc_launch_buf_put_u32(&down, 0);
		ibc_launch_buf_put_u32(&down, 0);
		break;
	}
	/* the fence publishes: the root keeps every pair; HCMAB* broadcast them */
	{
		uint32_t nkv_out = 0;
		int bc = a->job.cache >= IBC_LAUNCH_CACHE_HCMAB && !a->flat;

		ibc_launch_bb_cache_pairs(a, ibc_launch_buf_head(&c->kv), ibc_launch_buf_avail(&c->kv), c->nkv);
		nkv_out = bc ? c->nkv : 0;
		ibc_launch_buf_put_u32(&down, nkv_out);
		if (nkv_out > 0)
			ibc_launch_buf_append(&down, ibc_launch_buf_head(&c->kv), ibc_launch_buf_avail(&c->kv));
	}
	if (down.err) {
		ibc_launch_fail(a, -1, 1, "launcher out of memory");
		goto out_down;
	}
	ibc_launch_coll_down(a, c, ibc_launch_buf_head(&down), ibc_launch_buf_avail(&down));
out_down:
	ibc_launch_buf_free(&down);
out_free:
	free(data);
	free(len);
}

static void coll_check(struct ibc_launch_agent *a, struct ibc_launch_coll *c)
{
	struct ibc_launch_buf up = { 0 };

	if (c->sent || c->have < coll_expect(a))
		return;
	if (c->op == IBC_LAUNCH_COLL_FENCE && a->nkvpend > 0) {
		ibc_launch_buf_append(&c->kv, ibc_launch_buf_head(&a->kvpend), ibc_launch_buf_avail(&a->kvpend));
		c->nkv += a->nkvpend;
		ibc_launch_buf_free(&a->kvpend);
		a->nkvpend = 0;
	}
	if (a->me == 0) {
		c->sent = 1;
		coll_finish_root(a, c);
		return;
	}
	ibc_launch_buf_put_u32(&up, (uint32_t)c->op);
	ibc_launch_buf_put_u32(&up, (uint32_t)c->root);
	ibc_launch_buf_put_u32(&up, c->nent);
	ibc_launch_buf_append(&up, ibc_launch_buf_head(&c->ent), ibc_launch_buf_avail(&c->ent));
	ibc_launch_buf_put_u32(&up, c->nkv);
	ibc_launch_buf_append(&up, ibc_launch_buf_head(&c->kv), ibc_launch_buf_avail(&c->kv));
	ibc_launch_parent_send(a, IBC_LAUNCH_MSG_COLL_UP, (uint32_t)a->me, 0, c->seq, 0, ibc_launch_buf_head(&up),
		ibc_launch_buf_avail(&up));
	ibc_launch_buf_free(&up);
	ibc_launch_buf_free(&c->ent);
	ibc_launch_buf_free(&c->kv);
	c->sent = 1;
}

static int coll_join(struct ibc_launch_agent *a, struct ibc_launch_coll *c, int op, int root, const char *who)
{
	if (c->op == -1) {
		c->op = op;
		c->root = root;
		return IBC_OK;
	}
	if (c->op != op || c->root != root) {
		ibc_error("launch: collective %u: %s calls %s(root %d) but others %s(root %d)", c->seq, who,
			  ibc_launch_coll_name(op), root, ibc_launch_coll_name(c->op), c->root);
		ibc_launch_fail(a, -1, 1, "collective mismatch: %s calls %s, others %s", who,
				ibc_launch_coll_name(op), ibc_launch_coll_name(c->op));
		return IBC_ERR_PROTO;
	}
	return IBC_OK;
}

void ibc_launch_proc_coll(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int op, int root,
			  const void *data, size_t len, int wait)
{
	struct ibc_launch_coll *c = ibc_launch_agent_coll_find(a, p->coll_seq, 1);
	char who[64];

	snprintf(who, sizeof(who), "rank %d", p->rank);
	if (c == NULL || coll_join(a, c, op, root, who) != IBC_OK)
		return;
	p->wait = wait;
	p->wait_seq = p->coll_seq++;
	ibc_launch_buf_put_u32(&c->ent, (uint32_t)p->rank);
	ibc_launch_buf_put_bytes(&c->ent, data, len);
	c->nent++;
	c->have++;
	coll_check(a, c);
}

static void proc_coll_result(struct ibc_launch_proc *p, const void *d, size_t n)
{
	if (p->wait == IBC_LAUNCH_WAIT_BARRIER)
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=barrier_out rc=0");
	else
		ibc_launch_proc_replyf(p, d, n, "cmd=ibc_coll_result rc=0 bytes=%zu", n);
	p->wait = IBC_LAUNCH_WAIT_NONE;
}

/* The result of collective c arrived (or was computed at the root). */
void ibc_launch_coll_down(struct ibc_launch_agent *a, struct ibc_launch_coll *c, const void *pl, size_t n)
{
	struct ibc_launch_rd rd;
	uint32_t mode, i, cnt = 0, nkv;
	const unsigned char *common = NULL;
	size_t clen = 0, kvoff;
	int j;
	struct ibc_launch_buf *sub = NULL;
	uint32_t *subn = NULL;

	ibc_launch_rd_init(&rd, pl, n);
	mode = ibc_launch_rd_u32(&rd);
	if (mode == 0) {
		common = ibc_launch_rd_bytes(&rd, &clen);
		for (j = 0; j < a->nproc; j++) {
			struct ibc_launch_proc *p = &a->proc[j];

			if (p->wait != IBC_LAUNCH_WAIT_NONE && p->wait_seq == c->seq)
				proc_coll_result(p, common, clen);
		}
	} else {
		sub = calloc((size_t)a->nchild + 1, sizeof(*sub));
		subn = calloc((size_t)a->nchild + 1, sizeof(*subn));
		cnt = ibc_launch_rd_u32(&rd);
		for (i = 0; i < cnt && !rd.err; i++) {
			int rk = (int)ibc_launch_rd_u32(&rd), ch = -1;
			size_t l;
			const void *d = ibc_launch_rd_bytes(&rd, &l);

			if (rd.err)
				break;
			switch (ibc_launch_route(a, rk, &ch)) {
			case 0: {
				struct ibc_launch_proc *p = a->flat ? &a->proc[rk] : ibc_launch_proc_local(a, rk);

				if (p != NULL && p->wait != IBC_LAUNCH_WAIT_NONE && p->wait_seq == c->seq)
					proc_coll_result(p, d, l);
				break;
			}
			case 1:
				if (sub != NULL && ch >= 0 && ch < a->nchild) {
					ibc_launch_buf_put_u32(&sub[ch], (uint32_t)rk);
					ibc_launch_buf_put_bytes(&sub[ch], d, l);
					subn[ch]++;
				}
				break;
			default:
				break;
			}
		}
		/* ranks without an entry (gather non-roots) get an empty result */
		for (j = 0; j < a->nproc; j++) {
			struct ibc_launch_proc *p = &a->proc[j];

			if (p->wait != IBC_LAUNCH_WAIT_NONE && p->wait_seq == c->seq)
				proc_coll_result(p, NULL, 0);
		}
	}
	nkv = ibc_launch_rd_u32(&rd);
	kvoff = rd.pos;
	if (rd.err) {
		ibc_launch_fail(a, -1, 1, "malformed COLL_DOWN on node agent %d", a->me);
		goto out_free;
	}
	if (nkv > 0 && a->me != 0) {
		/* a count larger than the pairs present ends at the first missing
		 * one (the reader's latched error), not after 2^32 empty turns */
		for (i = 0; i < nkv && !rd.err; i++) {
			char *key = ibc_launch_rd_strdup(&rd);
			size_t vl;
			const void *v = ibc_launch_rd_bytes(&rd, &vl);

			if (key != NULL && v != NULL)
				ibc_launch_cache_put(&a->cache, key, v, vl);
			free(key);
		}
	}
	for (j = 0; j < a->nchild; j++) {
		struct ibc_launch_buf b = { 0 };

		if (a->child[j].fd < 0)
			continue;
		if (mode == 0) {
			ibc_launch_buf_put_u32(&b, 0);
			ibc_launch_buf_put_bytes(&b, common, clen);
		} else {
			ibc_launch_buf_put_u32(&b, 1);
			ibc_launch_buf_put_u32(&b, subn ? subn[j] : 0);
			if (sub)
				ibc_launch_buf_append(&b, ibc_launch_buf_head(&sub[j]), ibc_launch_buf_avail(&sub[j]));
		}
		ibc_launch_buf_put_u32(&b, nkv);
		ibc_launch_buf_append(&b, (const unsigned char *)pl + kvoff, n - kvoff);
		ibc_launch_link_send(a, &a->child[j], IBC_LAUNCH_MSG_COLL_DOWN, 0, 0, c->seq, 0, ibc_launch_buf_head(&b),
			  ibc_launch_buf_avail(&b));
		ibc_launch_buf_free(&b);
	}
out_free:
	if (sub)
		for (j = 0; j <= a->nchild; j++)
			ibc_launch_buf_free(&sub[j]);
	free(sub);
	free(subn);
	ibc_launch_agent_coll_free(a, c);
}

void ibc_launch_coll_up(struct ibc_launch_agent *a, struct ibc_launch_conn *from, const struct ibc_launch_hdr *h,
			const unsigned char *pl)
{
	struct ibc_launch_rd rd;
	uint32_t op, root, nent, nkv;
	size_t start, end;
	struct ibc_launch_coll *c;
	char who[64];

	ibc_launch_rd_init(&rd, pl, h->len);
	op = ibc_launch_rd_u32(&rd);
	root = ibc_launch_rd_u32(&rd);
	nent = ibc_launch_rd_u32(&rd);
	start = rd.pos;
	for (uint32_t i = 0; i < nent && !rd.err; i++) {
		size_t l;

		ibc_launch_rd_u32(&rd);
		ibc_launch_rd_bytes(&rd, &l);
	}
	end = rd.pos;
	nkv = ibc_launch_rd_u32(&rd);
	if (rd.err || op >= IBC_LAUNCH_COLL_MAX_) {
		ibc_launch_fail(a, -1, 1, "malformed COLL_UP from node agent %d", from->idx);
		return;
	}
	c = ibc_launch_agent_coll_find(a, h->seq, 1);
	snprintf(who, sizeof(who), "node agent %d", from->idx);
	if (c == NULL || coll_join(a, c, (int)op, (int)root, who) != IBC_OK)
		return;
	ibc_launch_buf_append(&c->ent, pl + start, end - start);
	c->nent += nent;
	c->have += (int)nent;
	ibc_launch_buf_append(&c->kv, pl + rd.pos, h->len - rd.pos);
	c->nkv += nkv;
	if (nkv > 0 && a->me != 0 && a->job.cache != IBC_LAUNCH_CACHE_HCS)
		ibc_launch_bb_cache_pairs(a, pl + rd.pos, h->len - rd.pos, nkv);
	coll_check(a, c);
}
