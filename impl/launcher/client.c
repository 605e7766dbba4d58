/* Process side of the launcher protocol (client.h). */
#include "launcher/client.h"
#include "launcher/proto.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? atoi(v) : dflt;
}

/* PMI_FD: a decimal number of an open descriptor, else -1 (logged). */
static int fd_parse(const char *text)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v < 0 || v > INT_MAX || fcntl((int)v, F_GETFD) < 0) {
		ibc_error("launch client: PMI_FD='%.40s' is not an open file descriptor", text);
		return -1;
	}
	return (int)v;
}

static int write_all(int fd, const void *p, size_t n)
{
	int rc = ibc_fs_write_all(fd, p, n);

	if (rc != IBC_OK) {
		ibc_error("launch client: write to the node agent: %s", strerror(errno));
		return IBC_ERR_CLOSED;
	}
	return IBC_OK;
}

static int read_all(int fd, void *p, size_t n)
{
	int rc = ibc_fs_read_all(fd, p, n);

	if (rc != IBC_OK) {
		ibc_error("launch client: the node agent closed the connection");
		return IBC_ERR_CLOSED;
	}
	return IBC_OK;
}

/* Reads one reply line (byte by byte: the payload that follows must stay in
 * the socket) and parses it. */
static int read_reply(struct ibc_launch_client *c, char *line, struct ibc_launch_kv *kv, const char *want)
{
	size_t n = 0;
	int rc, nkv;

	for (;;) {
		rc = read_all(c->fd, line + n, 1);
		if (rc != IBC_OK)
			return rc;
		if (line[n] == '\n')
			break;
		if (++n == IBC_LAUNCH_LINE_MAX - 1) {
			ibc_error("launch client: reply line too long");
			return IBC_ERR_PROTO;
		}
	}
	line[n] = '\0';
	nkv = ibc_launch_kv_parse(line, kv, IBC_LAUNCH_KV_MAX);
	if (nkv < 0 || strcmp(kv[0].val, want) != 0) {
		ibc_error("launch client: unexpected reply '%s' (wanted cmd=%s)", line, want);
		return IBC_ERR_PROTO;
	}
	return nkv;
}

static int reply_rc(const struct ibc_launch_kv *kv, int n)
{
	long long rc = 0;

	if (ibc_launch_kv_long(kv, n, "rc", &rc) != IBC_OK)
		return IBC_ERR_PROTO;
	return (int)rc;
}

static int send_cmd(struct ibc_launch_client *c, const char *line, const void *payload, size_t len)
{
	int rc = write_all(c->fd, line, strlen(line));

	if (rc == IBC_OK && len > 0)
		rc = write_all(c->fd, payload, len);
	return rc;
}

int ibc_launch_client_open(struct ibc_launch_client *c)
{
	const char *fd = getenv("PMI_FD");
	char line[IBC_LAUNCH_LINE_MAX];
	struct ibc_launch_kv kv[IBC_LAUNCH_KV_MAX];
	int n, rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (fd == NULL || *fd == '\0')
		return IBC_ERR_NOTFOUND;
	c->fd = fd_parse(fd);
	if (c->fd < 0)
		return IBC_ERR_INVAL;
	c->rank = env_int("PMI_RANK", 0);
	c->size = env_int("PMI_SIZE", 1);
	c->local_rank = env_int("IBC_LAUNCH_LOCAL_RANK", 0);
	c->local_size = env_int("IBC_LAUNCH_LOCAL_SIZE", 1);
	c->node = env_int("IBC_LAUNCH_NODE", 0);
	c->nnodes = env_int("IBC_LAUNCH_NNODES", 1);
	rc = send_cmd(c, "cmd=init pmi_version=1 pmi_subversion=1\n", NULL, 0);
	if (rc != IBC_OK)
		return rc;
	n = read_reply(c, line, kv, "response_to_init");
	if (n < 0)
		return n;
	return reply_rc(kv, n) == 0 ? IBC_OK : IBC_ERR_PROTO;
}

int ibc_launch_client_close(struct ibc_launch_client *c)
{
	char line[IBC_LAUNCH_LINE_MAX];
	struct ibc_launch_kv kv[IBC_LAUNCH_KV_MAX];
	int rc = send_cmd(c, "cmd=finalize\n", NULL, 0);

	if (rc == IBC_OK)
		rc = read_reply(c, line, kv, "finalize_ack");
	close(c->fd);
	c->fd = -1;
	return rc < 0 ? rc : IBC_OK;
}

/* Reads and drops n payload bytes, so that the next reply is read from its
 * start. */
static int payload_skip(struct ibc_launch_client *c, unsigned long long n)
{
	char scratch[4096];
	int rc = IBC_OK;

	while (n > 0 && rc == IBC_OK) {
		size_t k = n < sizeof(scratch) ? (size_t)n : sizeof(scratch);

		rc = read_all(c->fd, scratch, k);
		n -= k;
	}
	return rc;
}

/* Reads "cmd=<want> rc=R bytes=B" and B bytes into buf (cap); a payload
 * larger than cap is read and dropped: IBC_ERR_NOMEM, *len = B. */
static int read_payload_reply(struct ibc_launch_client *c, const char *want, void *buf, size_t cap,
			      size_t *len, long long *src)
{
	char line[IBC_LAUNCH_LINE_MAX];
	struct ibc_launch_kv kv[IBC_LAUNCH_KV_MAX];
	long long bytes = 0;
	int n = read_reply(c, line, kv, want), r;

	if (n < 0)
		return n;
	r = reply_rc(kv, n);
	if (ibc_launch_kv_find(kv, n, "bytes") != NULL && ibc_launch_kv_long(kv, n, "bytes", &bytes) != IBC_OK) {
		ibc_error("launch client: %s: bad length bytes=%s", want, ibc_launch_kv_find(kv, n, "bytes"));
		return IBC_ERR_PROTO;
	}
	if (src != NULL && ibc_launch_kv_long(kv, n, "src", src) != IBC_OK)
		*src = -1;
	if (len != NULL)
		*len = (size_t)bytes;
	if ((unsigned long long)bytes > cap) {
		int rc = payload_skip(c, (unsigned long long)bytes);

		ibc_error("launch client: %s: %lld bytes do not fit in %zu", want, bytes, cap);
		return rc == IBC_OK ? IBC_ERR_NOMEM : rc;
	}
	if (bytes > 0) {
		int rc = read_all(c->fd, buf, (size_t)bytes);

		if (rc != IBC_OK)
			return rc;
	}
	if (r == -1)
		return IBC_ERR_NOTFOUND;
	if (r != 0) {
		ibc_error("launch client: %s failed (rc=%d)", want, r);
		return IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

int ibc_launch_client_coll(struct ibc_launch_client *c, int op, int root, const void *sbuf,
			   size_t slen, void *rbuf, size_t rcap, size_t *rlen)
{
	char line[256];
	size_t dummy;
	int rc;

	snprintf(line, sizeof(line), "cmd=ibc_coll op=%s root=%d bytes=%zu\n", ibc_launch_coll_name(op),
		 root, slen);
	rc = send_cmd(c, line, sbuf, slen);
	if (rc != IBC_OK)
		return rc;
	return read_payload_reply(c, "ibc_coll_result", rbuf, rcap, rlen ? rlen : &dummy, NULL);
}

int ibc_launch_client_send(struct ibc_launch_client *c, int dest, int tag, const void *buf, size_t len)
{
	char line[256];
	int rc;

	snprintf(line, sizeof(line), "cmd=ibc_send dest=%d tag=%d bytes=%zu\n", dest, tag, len);
	rc = send_cmd(c, line, buf, len);
	if (rc != IBC_OK)
		return rc;
	return read_payload_reply(c, "ibc_send_result", NULL, 0, NULL, NULL);
}

int ibc_launch_client_recv(struct ibc_launch_client *c, int src, int tag, void *buf, size_t cap,
			   size_t *len, int *src_out)
{
	char line[256];
	long long s = -1;
	int rc;

	snprintf(line, sizeof(line), "cmd=ibc_recv src=%d tag=%d\n", src, tag);
	rc = send_cmd(c, line, NULL, 0);
	if (rc != IBC_OK)
		return rc;
	rc = read_payload_reply(c, "ibc_recv_result", buf, cap, len, &s);
	if (src_out != NULL)
		*src_out = (int)s;
	return rc;
}

static int key_ok(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n >= 256)
		return 0;
	return strpbrk(key, " \t\r\n=") == NULL;
}

int ibc_launch_client_put(struct ibc_launch_client *c, const char *key, const void *val, size_t len)
{
	char line[512];
	int rc;

	if (!key_ok(key)) {
		ibc_error("launch client: bad key '%s'", key);
		return IBC_ERR_INVAL;
	}
	snprintf(line, sizeof(line), "cmd=ibc_put key=%s bytes=%zu\n", key, len);
	rc = send_cmd(c, line, val, len);
	if (rc != IBC_OK)
		return rc;
	return read_payload_reply(c, "ibc_put_result", NULL, 0, NULL, NULL);
}

int ibc_launch_client_get(struct ibc_launch_client *c, const char *key, void *val, size_t cap, size_t *len)
{
	char line[512];
	int rc;

	if (!key_ok(key)) {
		ibc_error("launch client: bad key '%s'", key);
		return IBC_ERR_INVAL;
	}
	snprintf(line, sizeof(line), "cmd=ibc_get key=%s\n", key);
	rc = send_cmd(c, line, NULL, 0);
	if (rc != IBC_OK)
		return rc;
	return read_payload_reply(c, "ibc_get_result", val, cap, len, NULL);
}

int ibc_launch_client_fence(struct ibc_launch_client *c)
{
	return ibc_launch_client_coll(c, IBC_LAUNCH_COLL_FENCE, 0, NULL, 0, NULL, 0, NULL);
}

int ibc_launch_client_abort(struct ibc_launch_client *c, int code, const char *why)
{
	char line[512];
	size_t i;

	snprintf(line, sizeof(line), "cmd=abort exitcode=%d msg=%s\n", code, why ? why : "");
	for (i = 0; line[i] != '\0' && line[i + 1] != '\0'; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	return send_cmd(c, line, NULL, 0);
}
