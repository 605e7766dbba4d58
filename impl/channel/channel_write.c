/* The channel's writes and the ring arithmetic both sides share
 * (channel_impl.h): a write to the peer's region, an 8-byte word, the
 * pointer reads that keep the largest value seen, the room left, the lazy
 * tail update and the iovec walks.  Under channel.c (put, get, completions)
 * and the designs' files. */
#include "channel/channel_impl.h"

#include "core/log.h"
#include "core/status.h"

#include <stdatomic.h>
#include <string.h>

int ch_write(struct ibc_channel *c, const void *src, uint32_t lkey, size_t len, uint64_t off,
	     int inl)
{
	struct ibc_xport_sge sge = { (uintptr_t)src, (uint32_t)len, lkey };
	unsigned flags = inl && len <= c->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0;
	int rc;

	if (++c->since_sig >= c->sig_every) {
		flags |= IBC_XPORT_WR_SIGNALED;
		c->since_sig = 0;
	} else if (flags & IBC_XPORT_WR_INLINE) {
		rc = ibc_xport_write_inline(c->x, c->peer, src, (uint32_t)len, c->peer_rd.addr + off,
					    c->peer_rd.rkey, ch_wrid(c, CH_WR_SIGNALED, 0));
		if (rc != IBC_ERR_AGAIN)
			goto posted;
	}
	rc = ibc_xport_write(c->x, c->peer, &sge, 1, c->peer_rd.addr + off, c->peer_rd.rkey, flags,
			     ch_wrid(c, CH_WR_SIGNALED, 0));
	if (rc == IBC_ERR_AGAIN) {
		/* the send queue is full: reap and try once more */
		int r2 = IBC_OK;

		while (r2 == IBC_OK && c->outstanding > 0 && rc == IBC_ERR_AGAIN) {
			r2 = ch_service(c);
			if (r2 == IBC_OK)
				rc = ibc_xport_write(c->x, c->peer, &sge, 1, c->peer_rd.addr + off,
						     c->peer_rd.rkey, flags,
						     ch_wrid(c, CH_WR_SIGNALED, 0));
		}
		if (r2)
			rc = r2;
	}
posted:
	if (rc) {
		ibc_error("channel %s rank %d: RDMA write to rank %d: %s", c->d->name, c->x->rank,
			  c->peer, ibc_status_str(rc));
		return rc;
	}
	if (flags & IBC_XPORT_WR_SIGNALED)
		c->outstanding++;
	return IBC_OK;
}

int ch_write_word(struct ibc_channel *c, uint64_t off, uint64_t value)
{
	return ch_write(c, &value, 0, 8, off, 1);
}

uint64_t ch_pointer_read(const struct ibc_channel *c, const volatile uint64_t *w,
			 uint64_t *seen, uint64_t limit)
{
	uint64_t v = atomic_load_explicit((const volatile _Atomic uint64_t *)w,
					  memory_order_acquire);

	if (c->p.mutant == IBC_CHANNEL_MUTANT_ONE_READ)
		return v;
	if (v > *seen && v <= limit)
		*seen = v;
	return *seen;
}

uint64_t ch_tx_space(struct ibc_channel *c)
{
	/* the peer cannot have freed more than was sent */
	return c->R - (c->head - ch_pointer_read(c, c->tail_copy, &c->tail_seen, c->head));
}

int ch_tail_update(struct ibc_channel *c, uint64_t threshold)
{
	int rc;

	if (c->tail - c->tail_sent < threshold || c->tail == c->tail_sent)
		return IBC_OK;
	rc = ch_write_word(c, CH_OFF_TAIL(c->R), c->tail);
	if (rc == IBC_OK) {
		c->tail_sent = c->tail;
		c->cnt.tail_writes++;
	}
	return rc;
}

size_t ch_iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* Copies up to len bytes between buf and iov from byte offset skip of iov:
 * into iov when to_iov, else out of it; returns how many. */
static size_t iov_copy(const struct iovec *iov, int n, size_t skip, void *buf, size_t len,
		       int to_iov)
{
	size_t done = 0;
	int i;

	for (i = 0; i < n && done < len; i++) {
		size_t l = iov[i].iov_len, take;
		char *at;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		at = (char *)iov[i].iov_base + skip;
		take = l - skip < len - done ? l - skip : len - done;
		if (to_iov)
			memcpy(at, (const char *)buf + done, take);
		else
			memcpy((char *)buf + done, at, take);
		done += take;
		skip = 0;
	}
	return done;
}

size_t ch_iov_gather(void *dst, const struct iovec *iov, int n, size_t skip, size_t len)
{
	return iov_copy(iov, n, skip, dst, len, 0);
}

size_t ch_iov_scatter(const struct iovec *iov, int n, size_t skip, const void *src, size_t len)
{
	return iov_copy(iov, n, skip, (void *)src, len, 1);
}
