/* basic (Liu et al., "Put/Get in Basic Design"): put copies into the
 * registered staging buffer at the ring position, writes the data into the
 * peer's ring (two writes when it wraps), then writes the head pointer; get
 * copies out of the ring and writes the tail pointer back on every get. */
#include "channel/channel_impl.h"

#include "core/status.h"
#include "core/timer.h"

static int basic_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted)
{
	uint64_t space = ch_tx_space(c), pos = ch_pos(c, c->head);
	size_t total = ch_iov_total(iov, n), take = total < space ? total : (size_t)space;
	size_t first = take < c->R - pos ? take : (size_t)(c->R - pos);
	unsigned char *st = c->stage->addr;
	int rc = IBC_OK;

	if (take == 0) {
		if (total > 0)
			c->cnt.put_full++;
		return IBC_OK;
	}
	ch_iov_gather(st + pos, iov, n, 0, first);
	ch_iov_gather(st, iov, n, first, take - first);
	if (c->p.mutant == IBC_CHANNEL_MUTANT_HEAD_FIRST) {
		rc = ch_write_word(c, CH_OFF_HEAD(c->R), c->head + take);
		c->cnt.head_writes++;
		/* the reader's time to take the stale bytes, so that the mutant is
		 * caught on a loaded host as well (a test's mutant only) */
		ibc_timer_spin_us(1000);
	}
	if (rc == IBC_OK)
		rc = ch_write(c, st + pos, c->stage->lkey, first, pos, 0);
	if (rc == IBC_OK && take > first)
		rc = ch_write(c, st, c->stage->lkey, take - first, 0, 0);
	c->cnt.packets += take > first ? 2 : 1;
	c->head += take;
	if (rc == IBC_OK && c->p.mutant != IBC_CHANNEL_MUTANT_HEAD_FIRST) {
		/* ordered behind the data on the connection */
		rc = ch_write_word(c, CH_OFF_HEAD(c->R), c->head);
		c->cnt.head_writes++;
	}
	if (rc == IBC_OK)
		*accepted = take;
	return rc;
}

static int basic_get(struct ibc_channel *c, const struct iovec *iov, int n, size_t *delivered)
{
	/* the peer cannot have written past the ring's room */
	uint64_t head = ch_pointer_read(c, c->head_copy, &c->head_seen, c->tail + c->R);
	uint64_t avail = head - c->tail, pos = ch_pos(c, c->tail);
	size_t room = ch_iov_total(iov, n), take = room < avail ? room : (size_t)avail;
	size_t first = take < c->R - pos ? take : (size_t)(c->R - pos);

	if (take == 0)
		return IBC_OK;
	ch_iov_scatter(iov, n, 0, c->ring + pos, first);
	ch_iov_scatter(iov, n, first, c->ring, take - first);
	c->tail += take;
	*delivered = take;
	return ch_tail_update(c, 0);
}

const struct ibc_channel_design ibc_channel_basic = {
	.name = "basic",
	.desc = "data write from a staging copy, then a head-pointer write; tail written back "
		"on every get",
	.put = basic_put,
	.get = basic_get,
	.packets = 0,
};
