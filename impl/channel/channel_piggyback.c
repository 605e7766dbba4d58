/* piggyback (Liu et al., "Optimizing the Basic Design"): the head update
 * rides in the data write; the tail goes back lazily (channel_packet.c). */
#include "channel/channel_impl.h"

static size_t pb_packet_max(const struct ibc_channel *c)
{
	return c->R / 4 - 16;
}

static int pb_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted)
{
	return ch_packet_put(c, iov, n, accepted, pb_packet_max(c), 0);
}

const struct ibc_channel_design ibc_channel_piggyback = {
	.name = "piggyback",
	.desc = "one write per packet: header, payload, a trailer word written last (no head "
		"write); the tail written back once lazy bytes are free",
	.put = pb_put,
	.get = ch_packet_get,
	.packets = 1,
	.packet_max = pb_packet_max,
};
