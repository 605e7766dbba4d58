/* The channel's table, endpoints, the writes of both sides and completion
 * routing (channel.h). */
#include "channel/channel_impl.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"
#include "regcache/regcache.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const struct ibc_channel_design *const table[] = {
	&ibc_channel_basic, &ibc_channel_piggyback, &ibc_channel_pipeline, &ibc_channel_zcopy,
};
#define NDESIGNS (sizeof(table) / sizeof(table[0]))

static struct ibc_family_kind ch_kind = { "channel", 0 };

static int ch_wc(void *owner, const struct ibc_xport_wc *wc, unsigned kind, uint32_t index);

size_t ibc_channel_design_count(void)
{
	return NDESIGNS;
}

const struct ibc_channel_design *ibc_channel_design_get(size_t i)
{
	return i < NDESIGNS ? table[i] : NULL;
}

const struct ibc_channel_design *ibc_channel_design_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NDESIGNS; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

void ibc_channel_list_print(FILE *out)
{
	size_t i;

	for (i = 0; i < NDESIGNS; i++)
		fprintf(out, "    %-10s %s\n", table[i]->name, table[i]->desc);
}

int ibc_channel_usable(const struct ibc_channel_design *d, const struct ibc_xport *x, char *why,
		       size_t cap)
{
	char dummy[8];

	if (why == NULL) {
		why = dummy;
		cap = sizeof(dummy);
	}
	if (x->caps.max_inline < 16) {
		snprintf(why, cap, "the channel writes its pointers inline; %s inlines nothing",
			 x->caps.device);
		return IBC_ERR_UNSUPPORTED;
	}
	if (d == &ibc_channel_zcopy && !x->caps.user_mem) {
		snprintf(why, cap, "zcopy reads the sender's own buffer, which %s cannot reach",
			 x->caps.backend);
		return IBC_ERR_UNSUPPORTED;
	}
	return IBC_OK;
}

void ibc_channel_params_init(struct ibc_channel_params *p)
{
	memset(p, 0, sizeof(*p));
	p->ring_bytes = 256 * 1024;
	p->chunk_bytes = 16 * 1024;
	p->zcopy_bytes = 32 * 1024;
	p->deadline_s = 60;
}

int ibc_channel_create(struct ibc_xport *x, const char *design, int peer,
		       const struct ibc_channel_params *p, struct ibc_channel **out)
{
	const struct ibc_channel_design *d = ibc_channel_design_find(design);
	struct ibc_channel *c;
	char why[160];
	int rc;

	*out = NULL;
	if (d == NULL) {
		ibc_error("channel: no design \"%s\"", design ? design : "(null)");
		return IBC_ERR_NOTFOUND;
	}
	if (peer < 0 || peer >= x->size || peer == x->rank) {
		ibc_error("channel: peer %d of %d ranks (rank %d)", peer, x->size, x->rank);
		return IBC_ERR_INVAL;
	}
	if (ibc_channel_usable(d, x, why, sizeof(why)) != IBC_OK) {
		ibc_error("channel %s: %s", design, why);
		return IBC_ERR_UNSUPPORTED;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return IBC_ERR_NOMEM;
	if (p)
		c->p = *p;
	else
		ibc_channel_params_init(&c->p);
	c->R = c->p.ring_bytes;
	if (c->p.lazy_bytes == 0)
		c->p.lazy_bytes = c->R / 4;
	if (c->R < 4096 || c->R % 64 || c->R > (1u << 30) || c->p.lazy_bytes > c->R / 2 ||
	    c->p.chunk_bytes < 8 || c->p.chunk_bytes > c->R / 4 || c->p.deadline_s <= 0) {
		ibc_error("channel %s: ring %zu bytes (a multiple of 64, 4 KiB .. 1 GiB), lazy %zu "
			  "(<= ring / 2), chunk %zu (8 .. ring / 4): out of range", design, c->R,
			  c->p.lazy_bytes, c->p.chunk_bytes);
		free(c);
		return IBC_ERR_INVAL;
	}
	c->R_mask = (c->R & (c->R - 1)) == 0 ? c->R - 1 : 0;
	c->d = d;
	c->x = x;
	c->peer = peer;
	c->deadline_ns = (int64_t)(c->p.deadline_s * 1e9);
	c->tx_seq = c->rx_seq = 1;
	/* the small path's largest message: its record (24 bytes more) inlined,
	 * one packet of the design */
	c->small = d->packets && x->caps.max_inline >= 24 + 8 ? (x->caps.max_inline - 24) & ~(size_t)7 : 0;
	if (c->small > CH_SMALL_MAX)
		c->small = CH_SMALL_MAX;
	if (d->packet_max != NULL && c->small > (d->packet_max(c) & ~(size_t)7))
		c->small = d->packet_max(c) & ~(size_t)7;
	c->direct = d->packets && x->caps.write_is_copy && x->caps.user_mem && !c->p.staged &&
		    x->caps.max_sge >= 3;
	c->sig_every = x->caps.max_send_wr / 4 > 0 ? x->caps.max_send_wr / 4 : 1;
	if (c->sig_every > 32)
		c->sig_every = 32;
	rc = ibc_family_add(&c->fm, &ch_kind, ch_wc, c);
	if (rc) {
		free(c);
		return rc;
	}
	if (c->p.rcache == NULL) {
		rc = ibc_regcache_open(x, 0, &c->rc);
		c->rc_own = 1;
	} else {
		c->rc = c->p.rcache;
	}
	if (rc) {
		ibc_family_remove(&c->fm);
		free(c);
		return rc;
	}
	*out = c;
	return IBC_OK;
}

/* a region's salt (from its descriptor: the same at both ends) */
static uint64_t region_salt(const struct ibc_xport_rdesc *rd)
{
	uint64_t z = rd->addr ^ ((uint64_t)rd->rkey << 32) ^ ((uint64_t)rd->rank << 16) ^ CH_SEQ_MAGIC;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int ibc_channel_setup(struct ibc_channel *c)
{
	struct ibc_xport *x = c->x;
	struct ibc_xport_rdesc *all = calloc((size_t)x->size, sizeof(*all));
	uint8_t *want = calloc((size_t)x->size, 1);
	int rc;

	if (all == NULL || want == NULL) {
		free(all);
		free(want);
		return IBC_ERR_NOMEM;
	}
	rc = ibc_xport_mr_alloc(x, CH_REGION(c->R), IBC_XPORT_ACCESS_LOCAL_WRITE |
				IBC_XPORT_ACCESS_REMOTE_WRITE, &c->mr);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, c->R, IBC_XPORT_ACCESS_LOCAL_WRITE, &c->stage);
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(x, &c->mr->rdesc, all);
	want[c->peer] = 1;
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, want);
	if (rc == IBC_OK) {
		c->peer_rd = all[c->peer];
		c->ring = c->mr->addr;
		c->head_copy = (volatile uint64_t *)(c->ring + CH_OFF_HEAD(c->R));
		c->tail_copy = (volatile uint64_t *)(c->ring + CH_OFF_TAIL(c->R));
		c->zdone = (volatile uint64_t *)(c->ring + CH_OFF_ZDONE(c->R));
		c->cts = (volatile uint64_t *)(c->ring + CH_OFF_CTS(c->R));
		c->wdone = (volatile uint64_t *)(c->ring + CH_OFF_WDONE(c->R));
		c->tx_salt = region_salt(&c->peer_rd);
		c->rx_salt = region_salt(&c->mr->rdesc);
		c->ready = 1;
	} else {
		ibc_error("channel %s rank %d: set-up with rank %d: %s", c->d->name, x->rank, c->peer,
			  ibc_status_str(rc));
	}
	free(all);
	free(want);
	return rc;
}

int ibc_channel_destroy(struct ibc_channel *c)
{
	int rc = IBC_OK;

	if (c == NULL)
		return IBC_OK;
	/* nothing may still read the staging buffer or the user's buffers */
	if (c->ready && !c->failed) {
		struct ibc_wait_deadline dl = IBC_WAIT_DEADLINE(c->deadline_ns);

		while (rc == IBC_OK && c->outstanding > 0) {
			rc = ch_service(c);
			if (rc == IBC_OK && c->outstanding > 0 && (rc = ibc_wait_check(&dl)) != IBC_OK)
				ibc_error("channel %s rank %d: %d writes never completed", c->d->name,
					  c->x->rank, c->outstanding);
		}
	}
	if (c->z_mr)
		ibc_regcache_put(c->rc, c->z_mr);
	if (c->rx_split_mr)
		ibc_regcache_put(c->rc, c->rx_split_mr);
	if (c->mr)
		(void)ibc_xport_mr_dereg(c->x, c->mr);
	if (c->stage)
		(void)ibc_xport_mr_dereg(c->x, c->stage);
	if (c->rc_own)
		(void)ibc_regcache_close(c->rc);
	ibc_family_remove(&c->fm);
	free(c);
	return rc;
}

int ibc_channel_direct(const struct ibc_channel *c)
{
	return c->direct;
}

void ibc_channel_counters_get(const struct ibc_channel *c, struct ibc_channel_counters *out)
{
	*out = c->cnt;
}

/* put and get: the checks, the design's call, the counters, the failure */
static inline int call(struct ibc_channel *c, const struct iovec *iov, int n, size_t *moved, int put)
{
	int rc;

	*moved = 0;
	if (c->failed)
		return c->failed;
	if (!c->ready || n < 0 || (n > 0 && iov == NULL))
		return IBC_ERR_INVAL;
	if (n == 1 && ch_small(c, iov->iov_len)) {
		if (put)
			rc = ch_packet_small_put(c, iov->iov_base, iov->iov_len, moved);
		else if (!ch_packet_small_get(c, iov->iov_base, iov->iov_len, moved, &rc))
			rc = c->d->get(c, iov, n, moved);
	} else {
		rc = put ? c->d->put(c, iov, n, moved) : c->d->get(c, iov, n, moved);
	}
	if (rc == IBC_OK && *moved > 0) {
		(*(put ? &c->cnt.puts : &c->cnt.gets))++;
		*(put ? &c->cnt.bytes_put : &c->cnt.bytes_got) += *moved;
	}
	/* completions come only of signaled writes and reads */
	if (rc == IBC_OK && put && c->outstanding > 0)
		rc = ch_service(c);
	if (rc && !c->failed)
		c->failed = rc;
	return rc;
}

int ibc_channel_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted)
{
	return call(c, iov, n, accepted, 1);
}

int ibc_channel_get(struct ibc_channel *c, const struct iovec *iov, int n, size_t *delivered)
{
	return call(c, iov, n, delivered, 0);
}

int ibc_channel_progress(struct ibc_channel *c)
{
	return ch_service(c);
}

/* A completion of one of c's WRs (the router's handler). */
static int ch_wc(void *owner, const struct ibc_xport_wc *wc, unsigned kind, uint32_t index)
{
	struct ibc_channel *o = owner;

	(void)index;
	if (wc->status != IBC_OK) {
		ibc_error("channel %s rank %d: %s to rank %d failed: %s", o->d->name, o->x->rank,
			  ibc_xport_opcode_name(wc->opcode), o->peer, wc->reason ? wc->reason : "?");
		if (!o->failed)
			o->failed = wc->status < 0 ? wc->status : IBC_ERR_REMOTE;
	}
	if (o->outstanding > 0)
		o->outstanding--;
	if (kind == CH_WR_READ)
		o->read_done = 1;
	if (kind == CH_WR_DIRECT)
		o->direct_done = 1;
	return IBC_OK;
}

int ibc_channel_completion(const struct ibc_xport_wc *wc)
{
	int rc;

	return ibc_family_route(wc, &rc);
}

/* -------------------------------------------------------- helpers ---- */

/* A receiver with nothing to take spins on the one word that changes when
 * something arrives: the next record's sequence word (the packet designs)
 * or the peer's head (basic), until it changes or polls reaches a multiple
 * of 256 (the caller's progress and deadline).  The spin is a pause (or a
 * yield, ibc_wait_relax) and a load, as the probe's: the detour through get
 * costs its length again in latency, on average half of it after the data
 * lands.  It relaxes before it looks: a word that has changed for a record
 * still landing (its trailer not in yet, as on Soft-RoCE, where the kernel
 * lands it byte by byte on a CPU that must get to run) is no reason to spin
 * without a pause or a yield. */
static void rx_spin(const struct ibc_channel *c, enum ibc_wait w, unsigned long *polls)
{
	const _Atomic uint64_t *word;
	uint64_t same;
	int equal;

	if (c->d->packets) {
		word = (const _Atomic uint64_t *)(const void *)(c->ring + ch_pos(c, c->tail) + 8);
		same = c->rx_seq ^ CH_SEQ_MAGIC;
		equal = 0;                     /* spin while it is not the one due */
	} else {
		word = (const _Atomic uint64_t *)(const void *)c->head_copy;
		same = c->head_seen;
		equal = 1;                     /* spin while it is the one seen */
	}
	do {
		uint64_t v;

		ibc_wait_relax(w, polls);
		v = atomic_load_explicit(word, memory_order_acquire);
		if ((v == same) != equal)
			return;
	} while ((*polls & 255) != 0);
}

static int xfer_all(struct ibc_channel *c, void *buf, size_t len, int64_t timeout_ns, int send)
{
	struct ibc_wait_deadline dl = IBC_WAIT_DEADLINE(timeout_ns);
	unsigned long polls = 0;
	size_t done = 0;
	int rc = IBC_OK;

	while (rc == IBC_OK && done < len) {
		struct iovec v = { (char *)buf + done, len - done };
		size_t got = 0;

		rc = call(c, &v, 1, &got, send);
		done += got;
		if (rc == IBC_OK && got == 0) {
			if (send)
				ibc_wait_relax(c->x->wait, &polls);
			else
				rx_spin(c, c->x->wait, &polls);
			if ((polls & 255) == 0) {
				rc = ibc_xport_progress(c->x);
				if (rc == IBC_OK)
					rc = ibc_wait_check(&dl);
			}
		}
	}
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("channel %s rank %d: %s %zu of %zu bytes with rank %d, then nothing",
			  c->d->name, c->x->rank, send ? "sent" : "received", done, len, c->peer);
	return rc;
}

int ibc_channel_send_all(struct ibc_channel *c, const void *buf, size_t len, int64_t timeout_ns)
{
	return xfer_all(c, (void *)buf, len, timeout_ns, 1);
}

int ibc_channel_recv_all(struct ibc_channel *c, void *buf, size_t len, int64_t timeout_ns)
{
	return xfer_all(c, buf, len, timeout_ns, 0);
}
