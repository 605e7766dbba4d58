/* pipeline (Liu et al., "Pipelining large messages"): piggyback packets of
 * chunk_bytes, so the copy of the next chunk into the staging buffer
 * overlaps the RDMA write of the last one (the slides found ~16 KiB best). */
#include "channel/channel_impl.h"

static size_t pl_packet_max(const struct ibc_channel *c)
{
	return c->p.chunk_bytes;
}

static int pl_put(struct ibc_channel *c, const struct iovec *iov, int n, size_t *accepted)
{
	return ch_packet_put(c, iov, n, accepted, pl_packet_max(c), 0);
}

const struct ibc_channel_design ibc_channel_pipeline = {
	.name = "pipeline",
	.desc = "piggyback with large puts cut into chunk-size packets: the copy of one chunk "
		"overlaps the write of the last",
	.put = pl_put,
	.get = ch_packet_get,
	.packets = 1,
	.packet_max = pl_packet_max,
};
