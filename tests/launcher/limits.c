/* Limits of the process protocol, each at its limit and one past:
 * - the launch client (client.c) against replies written in advance on a
 *   socketpair: a value larger than the caller's buffer is a named error and
 *   its payload is read and dropped, so the next reply is read right; a
 *   negative length is a protocol error; a PMI_FD that is no open
 *   descriptor is refused;
 * - the PMI_process_mapping the node agent builds (proto.c): whole, with its
 *   closing parenthesis, up to PMI-1's vallen_max; refused past it. */
#include "tap.h"
#include "launcher/client.h"
#include "launcher/proto.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* the agent's side: "cmd=ibc_get_result rc=0 bytes=N\n" and N bytes of v */
static void get_reply(int fd, size_t n, char v)
{
	char line[128], *pl = malloc(n + 1);
	int k = snprintf(line, sizeof(line), "cmd=ibc_get_result rc=0 bytes=%zu\n", n);

	if (pl == NULL)
		tap_bail_out("malloc");
	memset(pl, v, n);
	if (write(fd, line, (size_t)k) != k || write(fd, pl, n) != (ssize_t)n)
		tap_bail_out("write");
	free(pl);
}

/* A job of n nodes with first, 2, 1, 2, 1, ... ranks (every node its own
 * block) and last ranks on the last: the mapping's length, measured whole. */
static size_t job_of(int *start, unsigned n, int first, int last)
{
	static char big[1 << 16];
	unsigned j;

	start[0] = 0;
	for (j = 0; j < n; j++)
		start[j + 1] = start[j] + (j + 1 == n ? last : j == 0 ? first : 1 + (int)(j % 2));
	if (ibc_launch_pmi_mapping(start, n, big, sizeof(big)) != IBC_OK)
		tap_bail_out("mapping of %u nodes", n);
	return strlen(big);
}

static void test_mapping(void)
{
	static int start[1000];
	char map[IBC_LAUNCH_VAL_MAX + 1];
	unsigned n, at = 0, past = 0;
	int first, last, at_first = 0, at_last = 0, past_first = 0, past_last = 0;

	tap_ok(ibc_launch_pmi_mapping((int[]){ 0, 4, 8, 11 }, 3, map, sizeof(map)) == IBC_OK &&
		       strcmp(map, "(vector,(0,2,4),(2,1,3))") == 0, "3 nodes of 4, 4, 3 ranks: %s", map);
	/* find jobs whose mapping is exactly vallen_max, and one more */
	for (n = 3; n < 999 && (at == 0 || past == 0); n++)
		for (first = 5; first < 100000000; first *= 10)     /* no int overflow in *= 10 */
			for (last = 3; last < 100000000; last *= 10) {
				size_t l = job_of(start, n, first, last);

				if (l == IBC_LAUNCH_VAL_MAX && at == 0) {
					at = n;
					at_first = first;
					at_last = last;
				}
				if (l == IBC_LAUNCH_VAL_MAX + 1 && past == 0) {
					past = n;
					past_first = first;
					past_last = last;
				}
			}
	if (at == 0 || past == 0)
		tap_bail_out("no job with a mapping of %d and %d characters", IBC_LAUNCH_VAL_MAX, IBC_LAUNCH_VAL_MAX + 1);
	job_of(start, at, at_first, at_last);
	tap_ok(ibc_launch_pmi_mapping(start, at, map, sizeof(map)) == IBC_OK && strlen(map) == IBC_LAUNCH_VAL_MAX &&
		       map[IBC_LAUNCH_VAL_MAX - 1] == ')' && map[IBC_LAUNCH_VAL_MAX - 2] == ')',
	       "a mapping of %d characters (%u nodes): whole, closing parenthesis kept", IBC_LAUNCH_VAL_MAX, at);
	job_of(start, past, past_first, past_last);
	tap_ok(ibc_launch_pmi_mapping(start, past, map, sizeof(map)) == IBC_ERR_NOMEM && map[0] == '\0',
	       "a mapping of %d characters (%u nodes): refused, not cut short", IBC_LAUNCH_VAL_MAX + 1, past);
}

int main(void)
{
	struct ibc_launch_client c;
	char buf[8000], want[8000];
	size_t len = 0;
	int sv[2], rc;

	tap_plan_none();
	test_mapping();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		tap_bail_out("socketpair");
	memset(&c, 0, sizeof(c));
	c.fd = sv[0];
	/* at the limit: a value of exactly cap bytes */
	get_reply(sv[1], 5000, 'a');
	rc = ibc_launch_client_get(&c, "k", buf, 5000, &len);
	memset(want, 'a', 5000);
	tap_ok(rc == IBC_OK && len == 5000 && memcmp(buf, want, 5000) == 0, "a value of cap bytes: read (rc %d)", rc);
	/* one past: refused, its payload dropped, the stream in step */
	get_reply(sv[1], 5001, 'b');
	get_reply(sv[1], 3, 'c');
	rc = ibc_launch_client_get(&c, "k", buf, 5000, &len);
	tap_ok(rc == IBC_ERR_NOMEM && len == 5001, "a value of cap+1 bytes: IBC_ERR_NOMEM, its size told (rc %d, %zu)",
	       rc, len);
	rc = ibc_launch_client_get(&c, "k", buf, 5000, &len);
	tap_ok(rc == IBC_OK && len == 3 && memcmp(buf, "ccc", 3) == 0,
	       "the next reply is read from its start (rc %d, %zu bytes)", rc, len);
	/* a negative length */
	if (write(sv[1], "cmd=ibc_get_result rc=0 bytes=-5\n", 33) != 33)
		tap_bail_out("write");
	tap_is_int(ibc_launch_client_get(&c, "k", buf, 5000, &len), IBC_ERR_PROTO, "bytes=-5: protocol error");
	close(sv[0]);
	close(sv[1]);
	setenv("PMI_FD", "3x", 1);
	tap_is_int(ibc_launch_client_open(&c), IBC_ERR_INVAL, "PMI_FD=3x: refused");
	setenv("PMI_FD", "999", 1);
	tap_is_int(ibc_launch_client_open(&c), IBC_ERR_INVAL, "PMI_FD=999, not open: refused");
	unsetenv("PMI_FD");
	return tap_done();
}
