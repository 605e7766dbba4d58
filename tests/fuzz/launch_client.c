/* The launcher's process protocol, the process's side (launcher/client.c):
 * the input is everything the node agent says on PMI_FD (reply lines and
 * their payloads), fed by a thread on a socketpair (feed.h); the client
 * opens, then runs a get, an allgather, a send, a recv, a fence and close. */
#include "fuzz.h"
#include "feed.h"
#include "launcher/client.h"
#include "launcher/proto.h"
#include "core/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibc_launch_client c;
	struct fuzz_feed f;
	char fd[16], buf[256];
	int v = 3, all[4], src;
	size_t len;

	fuzz_quiet();
	fuzz_feed_start(&f, data, size);
	snprintf(fd, sizeof(fd), "%d", f.sv[0]);
	setenv("PMI_FD", fd, 1);
	setenv("PMI_RANK", "0", 1);
	setenv("PMI_SIZE", "4", 1);
	if (ibc_launch_client_open(&c) == IBC_OK) {
		(void)ibc_launch_client_get(&c, "key", buf, sizeof(buf), &len);
		(void)ibc_launch_client_coll(&c, IBC_LAUNCH_COLL_ALLGATHER, 0, &v, sizeof(v), all, sizeof(all), &len);
		(void)ibc_launch_client_send(&c, 1, 5, &v, sizeof(v));
		(void)ibc_launch_client_recv(&c, -1, 5, buf, sizeof(buf), &len, &src);
		(void)ibc_launch_client_fence(&c);
		(void)ibc_launch_client_close(&c); /* closes sv[0] */
	} else if (c.fd >= 0) {
		close(c.fd);
	}
	fuzz_feed_end(&f);
	return 0;
}
