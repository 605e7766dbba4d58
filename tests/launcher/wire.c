/* The launcher wire format: frame round-trips, truncated, oversized and
 * corrupt frames, bounded payload reads, job description round-trip. */
#include "tap.h"
#include "core/status.h"
#include "launcher/job.h"
#include "launcher/wire.h"

#include <stdlib.h>
#include <string.h>

static void frames(void)
{
	struct ibc_launch_buf b = { 0 };
	struct ibc_launch_hdr h = { .type = IBC_LAUNCH_MSG_P2P, .src = 3, .dst = 70000, .seq = 0xdeadbeef, .aux = 9 };
	struct ibc_launch_hdr g;
	const char *pl = "payload!";
	unsigned char *p;
	size_t i;
	int rc, again = 1;

	ibc_launch_buf_put_frame(&b, &h, pl, 8);
	tap_is_int((long long)ibc_launch_buf_avail(&b), IBC_LAUNCH_WIRE_HDR + 8, "frame is header + payload");
	rc = ibc_launch_hdr_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), 1024, &g);
	tap_is_int(rc, IBC_OK, "decodes");
	tap_ok(g.type == h.type && g.src == 3 && g.dst == 70000 && g.seq == 0xdeadbeef && g.aux == 9 && g.len == 8 &&
	       g.version == IBC_LAUNCH_WIRE_VERSION, "fields round-trip");
	tap_ok(memcmp(ibc_launch_buf_head(&b) + IBC_LAUNCH_WIRE_HDR, pl, 8) == 0, "payload follows the header");
	for (i = 0; i < IBC_LAUNCH_WIRE_HDR + 8; i++)
		if (ibc_launch_hdr_decode(ibc_launch_buf_head(&b), i, 1024, &g) != IBC_ERR_AGAIN)
			again = 0;
	tap_ok(again, "every truncation asks for more bytes");
	tap_is_int(ibc_launch_hdr_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), 7, &g), IBC_ERR_PROTO,
		   "payload larger than the receiver's max is rejected");
	p = ibc_launch_buf_head(&b);
	p[4] = 0xff; p[5] = 0xff; p[6] = 0xff; p[7] = 0xff;
	tap_is_int(ibc_launch_hdr_decode(p, 8, IBC_LAUNCH_WIRE_MAX, &g), IBC_ERR_PROTO,
		   "oversized length rejected from the first 8 bytes");
	p[4] = 8; p[5] = p[6] = p[7] = 0;
	p[0] ^= 1;
	tap_is_int(ibc_launch_hdr_decode(p, 1, 1024, &g), IBC_ERR_PROTO, "bad magic rejected at once");
	p[0] ^= 1;
	p[2] = 99;
	tap_is_int(ibc_launch_hdr_decode(p, 24, 1024, &g), IBC_ERR_PROTO, "unknown version rejected");
	p[2] = IBC_LAUNCH_WIRE_VERSION;
	p[3] = 0;
	tap_is_int(ibc_launch_hdr_decode(p, 24, 1024, &g), IBC_ERR_PROTO, "type 0 rejected");
	p[3] = IBC_LAUNCH_MSG_MAX_;
	tap_is_int(ibc_launch_hdr_decode(p, 24, 1024, &g), IBC_ERR_PROTO, "unknown type rejected");
	ibc_launch_buf_free(&b);

	/* two frames back to back */
	h.type = IBC_LAUNCH_MSG_HELLO;
	ibc_launch_buf_put_frame(&b, &h, NULL, 0);
	h.type = IBC_LAUNCH_MSG_DONE;
	ibc_launch_buf_put_frame(&b, &h, "xy", 2);
	rc = ibc_launch_hdr_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), 1024, &g);
	tap_ok(rc == IBC_OK && g.type == IBC_LAUNCH_MSG_HELLO && g.len == 0, "first of two frames");
	ibc_launch_buf_consume(&b, IBC_LAUNCH_WIRE_HDR + g.len);
	rc = ibc_launch_hdr_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), 1024, &g);
	tap_ok(rc == IBC_OK && g.type == IBC_LAUNCH_MSG_DONE && g.len == 2, "second of two frames");
	ibc_launch_buf_free(&b);
	tap_is_str(ibc_launch_msg_name(IBC_LAUNCH_MSG_COLL_UP), "COLL_UP", "message names");
}

static void reader(void)
{
	struct ibc_launch_buf b = { 0 };
	struct ibc_launch_rd r;
	size_t n;
	const void *p;
	char *s;

	ibc_launch_buf_put_u32(&b, 42);
	ibc_launch_buf_put_u64(&b, 0x0123456789abcdefull);
	ibc_launch_buf_put_str(&b, "key");
	ibc_launch_buf_put_bytes(&b, "\0\1\2", 3);
	ibc_launch_rd_init(&r, ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b));
	tap_is_int(ibc_launch_rd_u32(&r), 42, "u32");
	tap_ok(ibc_launch_rd_u64(&r) == 0x0123456789abcdefull, "u64");
	s = ibc_launch_rd_strdup(&r);
	tap_is_str(s, "key", "string");
	free(s);
	p = ibc_launch_rd_bytes(&r, &n);
	tap_ok(p != NULL && n == 3 && memcmp(p, "\0\1\2", 3) == 0, "bytes with NULs");
	tap_is_int(r.err, IBC_OK, "no error");
	ibc_launch_rd_u32(&r);
	tap_is_int(r.err, IBC_ERR_PROTO, "reading past the end latches an error");
	/* a length field larger than what is left */
	ibc_launch_rd_init(&r, ibc_launch_buf_head(&b), 4 + 8 + 4 + 2);
	ibc_launch_rd_u32(&r);
	ibc_launch_rd_u64(&r);
	tap_ok(ibc_launch_rd_bytes(&r, &n) == NULL && r.err == IBC_ERR_PROTO, "truncated string rejected");
	ibc_launch_rd_init(&r, "\3\0\0\0a\0b", 7);
	tap_ok(ibc_launch_rd_strdup(&r) == NULL && r.err, "string with an embedded NUL rejected");
	ibc_launch_buf_free(&b);
}

static void job(void)
{
	char *hosts[] = { "ibc-h1", "ibc-h2", "ibc-h3" };
	int start[] = { 0, 3, 5, 8 };
	char *argv[] = { "prog", "a b", "" };
	char *env[] = { "X=1" };
	struct ibc_launch_job j = { .jobid = 77, .np = 8, .nnodes = 3, .degree = 2, .mode = 1, .cache = 3,
				    .tag_output = 1, .cache_bound = 4096, .self = "/bin/ibchar-launch", .rsh = "local",
				    .cwd = "/tmp", .hosts = hosts, .start = start, .argc = 3, .argv = argv, .nenv = 1,
				    .env = env };
	struct ibc_launch_job k;
	struct ibc_launch_buf b = { 0 };
	size_t cut;
	int bad = 0;

	ibc_launch_job_encode(&j, &b);
	tap_is_int(ibc_launch_job_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), &k), IBC_OK, "job decodes");
	tap_ok(k.jobid == 77 && k.np == 8 && k.nnodes == 3 && k.degree == 2 && k.mode == 1 && k.cache == 3 &&
	       k.cache_bound == 4096 && k.start[1] == 3 && k.start[2] == 5 && k.start[3] == 8, "job numbers round-trip");
	tap_ok(strcmp(k.hosts[2], "ibc-h3") == 0 && k.argc == 3 && strcmp(k.argv[1], "a b") == 0 &&
	       strcmp(k.argv[2], "") == 0 && k.argv[3] == NULL && strcmp(k.env[0], "X=1") == 0 &&
	       strcmp(k.rsh, "local") == 0, "job strings round-trip");
	ibc_launch_job_free(&k);
	for (cut = 0; cut < ibc_launch_buf_avail(&b); cut++)
		if (ibc_launch_job_decode(ibc_launch_buf_head(&b), cut, &k) == IBC_OK)
			bad++;
	tap_is_int(bad, 0, "every truncated job description is rejected");
	ibc_launch_buf_append(&b, "x", 1);
	tap_is_int(ibc_launch_job_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), &k), IBC_ERR_PROTO,
		   "trailing bytes rejected");
	ibc_launch_buf_free(&b);
	start[1] = 0;
	ibc_launch_job_encode(&j, &b);
	tap_is_int(ibc_launch_job_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), &k), IBC_ERR_PROTO,
		   "a node without ranks rejected");
	ibc_launch_buf_free(&b);
}

int main(void)
{
	tap_plan_none();
	frames();
	reader();
	job();
	return tap_done();
}
