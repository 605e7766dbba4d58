/* zcopy (Liu et al., "Zero Copy Design"): small puts as piggyback; a put of
 * at least zcopy_bytes sends only a control packet through the ring and the
 * receiver pulls the data by RDMA read from the sender's registered buffer
 * (channel_packet.c). */
#include "channel/channel_impl.h"

static size_t zc_packet_max(const struct ibc_channel *c)
{
	return c->R / 4 - 16;
}

static int zc_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted)
{
	return ch_packet_put(c, iov, n, accepted, zc_packet_max(c), 1);
}

const struct ibc_channel_design ibc_channel_zcopy = {
	.name = "zcopy",
	.desc = "piggyback for small puts; large ones send a control packet and the receiver "
		"reads the sender's buffer by RDMA read (registration cache)",
	.put = zc_put,
	.get = ch_packet_get,
	.packets = 1,
	.packet_max = zc_packet_max,
};
