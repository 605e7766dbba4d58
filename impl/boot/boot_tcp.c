/* tcp bootstrap: ranks on several hosts without a launcher (two Soft-RoCE
 * guests, a pair of test machines).
 *
 * Environment:
 *   IBC_BOOT=tcp                 selects this backend (ibc_boot_open)
 *   IBC_BOOT_RANK, IBC_BOOT_SIZE this rank and the job size
 *   IBC_BOOT_ROOT=host:port      rank 0 listens there, the others connect
 *   IBC_BOOT_TIMEOUT=seconds     connect/accept patience (default 30)
 *   IBC_BOOT_NODENAME=name       overrides the node identity (tests)
 *
 * Wiring: a star through rank 0.  Every collective is "everybody sends one
 * frame to rank 0, rank 0 answers".  A frame is a 16-byte header {magic,
 * type, length} in network byte order and a payload; the receiver knows
 * the type and (for fixed collectives) the exact length it expects, so a
 * mismatch between ranks is reported as a protocol error naming both sides
 * instead of hanging or reading garbage.
 *
 * Node identity is the hostname plus the kernel's boot id: two QEMU guests
 * that share the host's root file system also share its hostname (or have
 * none), but every booted kernel has its own boot id. */
#define _GNU_SOURCE
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TCP_MAGIC 0x49424354u /* "IBCT" */
#define TCP_NODE_LEN 128
#define TCP_FRAME_MAX ((uint64_t)1 << 31)
#define TCP_ABORT_WHY_MAX 200

enum frame_type {
	FR_HELLO = 1,
	FR_ALLGATHER,
	FR_ALLGATHER_RESULT,
	FR_GATHER,
	FR_GATHER_RESULT,
	FR_BCAST,
	FR_BARRIER,
	FR_BARRIER_RESULT,
	FR_FENCE,
	FR_FENCE_RESULT,
	FR_CLOSE,
	FR_CLOSE_RESULT,
	FR_ABORT
};

static const char *frame_type_name(uint32_t t)
{
	static const char *const names[] = {
		[FR_HELLO] = "hello", [FR_ALLGATHER] = "allgather",
		[FR_ALLGATHER_RESULT] = "allgather-result", [FR_GATHER] = "gather",
		[FR_GATHER_RESULT] = "gather-result", [FR_BCAST] = "bcast",
		[FR_BARRIER] = "barrier", [FR_BARRIER_RESULT] = "barrier-result",
		[FR_FENCE] = "fence", [FR_FENCE_RESULT] = "fence-result",
		[FR_CLOSE] = "close", [FR_CLOSE_RESULT] = "close-result",
		[FR_ABORT] = "abort",
	};
	if (t < sizeof(names) / sizeof(names[0]) && names[t])
		return names[t];
	return "unknown";
}

struct kv_entry {
	char *key;
	void *val;
	size_t len;
};

struct kv_table {
	struct kv_entry *e;
	size_t n, cap;
};

struct tcp_boot {
	struct ibc_boot pub;
	int *fd;        /* rank 0: fd[r] for r >= 1; others: fd[0] is rank 0 */
	int aborted;
	struct kv_table board;   /* visible after a fence */
	struct kv_table pending; /* put since the last fence */
};

static struct tcp_boot *tcp_of(struct ibc_boot *b)
{
	return (struct tcp_boot *)b;
}

/* ------------------------------------------------------------- raw I/O -- */

static int write_iov(int fd, struct iovec *iov, int iovcnt, int peer)
{
	while (iovcnt > 0) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ibc_error("boot tcp: send to rank %d: %s", peer, strerror(errno));
			return errno == EPIPE || errno == ECONNRESET ? IBC_ERR_CLOSED : IBC_ERR_SYS;
		}
		size_t left = (size_t)n;
		while (iovcnt > 0 && left >= iov->iov_len) {
			left -= iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + left;
			iov->iov_len -= left;
		}
	}
	return IBC_OK;
}

static int read_all(int fd, void *buf, size_t len, int peer)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ibc_error("boot tcp: receive from rank %d: %s", peer, strerror(errno));
			return errno == ECONNRESET ? IBC_ERR_CLOSED : IBC_ERR_SYS;
		}
		if (n == 0) {
			ibc_error("boot tcp: rank %d closed the connection", peer);
			return IBC_ERR_CLOSED;
		}
		p += n;
		len -= (size_t)n;
	}
	return IBC_OK;
}

/* -------------------------------------------------------------- frames -- */

static int peer_fd(struct tcp_boot *t, int peer)
{
	return t->pub.rank == 0 ? t->fd[peer] : t->fd[0];
}

static int frame_send(struct tcp_boot *t, int peer, uint32_t type, const void *p, size_t len)
{
	uint32_t hdr[4];
	uint64_t l = len;
	hdr[0] = htonl(TCP_MAGIC);
	hdr[1] = htonl(type);
	hdr[2] = htonl((uint32_t)(l >> 32));
	hdr[3] = htonl((uint32_t)l);
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)p, .iov_len = len },
	};
	return write_iov(peer_fd(t, peer), iov, len ? 2 : 1, peer);
}

static void abort_forward(struct tcp_boot *t, int from, const void *msg, size_t len);

/* Reads one header; handles an abort frame (returns IBC_ERR_INTERRUPTED). */
static int frame_header_recv(struct tcp_boot *t, int peer, uint32_t *type, uint64_t *len)
{
	uint32_t hdr[4];
	int rc = read_all(peer_fd(t, peer), hdr, sizeof(hdr), peer);
	if (rc)
		return rc;
	if (ntohl(hdr[0]) != TCP_MAGIC) {
		ibc_error("boot tcp: bad frame magic 0x%08x from rank %d", ntohl(hdr[0]), peer);
		return IBC_ERR_PROTO;
	}
	*type = ntohl(hdr[1]);
	*len = ((uint64_t)ntohl(hdr[2]) << 32) | ntohl(hdr[3]);
	if (*len > TCP_FRAME_MAX) {
		ibc_error("boot tcp: %s frame of %llu bytes from rank %d exceeds the limit",
			  frame_type_name(*type), (unsigned long long)*len, peer);
		return IBC_ERR_PROTO;
	}
	if (*type == FR_ABORT) {
		char msg[TCP_ABORT_WHY_MAX + 8];
		size_t n = *len < sizeof(msg) ? (size_t)*len : sizeof(msg) - 1;
		if (*len >= sizeof(msg)) {
			ibc_error("boot tcp: oversized abort frame from rank %d", peer);
			return IBC_ERR_PROTO;
		}
		rc = read_all(peer_fd(t, peer), msg, n, peer);
		if (rc)
			return rc;
		msg[n] = '\0';
		int32_t code = 0, origin = peer;
		if (n >= 8) {
			uint32_t w[2];
			memcpy(w, msg, 8);
			code = (int32_t)ntohl(w[0]);
			origin = (int32_t)ntohl(w[1]);
		}
		ibc_error("boot tcp: job aborted by rank %d (code %d): %s", origin, code,
			  n > 8 ? msg + 8 : "no reason given");
		t->aborted = 1;
		if (t->pub.rank == 0)
			abort_forward(t, peer, msg, n);
		return IBC_ERR_INTERRUPTED;
	}
	return IBC_OK;
}

/* Receives a frame of the given type and exactly len bytes. */
static int frame_recv(struct tcp_boot *t, int peer, uint32_t type, void *p, size_t len)
{
	uint32_t got;
	uint64_t glen;
	int rc = frame_header_recv(t, peer, &got, &glen);
	if (rc)
		return rc;
	if (got != type || glen != len) {
		ibc_error("boot tcp: rank %d: expected %s of %zu bytes from rank %d, got %s of %llu bytes",
			  t->pub.rank, frame_type_name(type), len, peer, frame_type_name(got),
			  (unsigned long long)glen);
		return IBC_ERR_PROTO;
	}
	return read_all(peer_fd(t, peer), p, len, peer);
}

/* Receives a frame of the given type and any length; *out is malloc'd. */
static int frame_recv_alloc(struct tcp_boot *t, int peer, uint32_t type, void **out, size_t *len)
{
	uint32_t got;
	uint64_t glen;
	*out = NULL;
	*len = 0;
	int rc = frame_header_recv(t, peer, &got, &glen);
	if (rc)
		return rc;
	if (got != type) {
		ibc_error("boot tcp: rank %d: expected %s from rank %d, got %s",
			  t->pub.rank, frame_type_name(type), peer, frame_type_name(got));
		return IBC_ERR_PROTO;
	}
	void *p = malloc(glen ? (size_t)glen : 1);
	if (!p) {
		ibc_error("boot tcp: out of memory for a %llu-byte frame", (unsigned long long)glen);
		return IBC_ERR_NOMEM;
	}
	rc = read_all(peer_fd(t, peer), p, (size_t)glen, peer);
	if (rc) {
		free(p);
		return rc;
	}
	*out = p;
	*len = (size_t)glen;
	return IBC_OK;
}

static void abort_forward(struct tcp_boot *t, int from, const void *msg, size_t len)
{
	for (int r = 1; r < t->pub.size; r++) {
		if (r == from || t->fd[r] < 0)
			continue;
		/* best effort: a peer that is gone is simply skipped */
		uint32_t hdr[4] = { htonl(TCP_MAGIC), htonl(FR_ABORT), 0, htonl((uint32_t)len) };
		struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)msg, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		if (sendmsg(t->fd[r], &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			ibc_debug("boot tcp: abort to rank %d not delivered: %s", r, strerror(errno));
	}
}

/* --------------------------------------------------------- collectives -- */

static int check_ready(struct tcp_boot *t)
{
	if (t->aborted) {
		ibc_error("boot tcp: the job was aborted; no further collectives");
		return IBC_ERR_INTERRUPTED;
	}
	return IBC_OK;
}

static int tcp_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{
	struct tcp_boot *t = tcp_of(b);
	int rc = check_ready(t);
	if (rc)
		return rc;
	size_t total = len * (size_t)b->size;
	if (b->rank != 0) {
		rc = frame_send(t, 0, FR_ALLGATHER, send, len);
		if (rc)
			return rc;
		return frame_recv(t, 0, FR_ALLGATHER_RESULT, recv, total);
	}
	if (len)
		memmove(recv, send, len);
	for (int r = 1; r < b->size; r++) {
		rc = frame_recv(t, r, FR_ALLGATHER, (char *)recv + (size_t)r * len, len);
		if (rc)
			return rc;
	}
	for (int r = 1; r < b->size; r++) {
		rc = frame_send(t, r, FR_ALLGATHER_RESULT, recv, total);
		if (rc)
			return rc;
	}
	return IBC_OK;
}

static int tcp_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	struct tcp_boot *t = tcp_of(b);
	int rc = check_ready(t);
	if (rc)
		return rc;
	if (root < 0 || root >= b->size) {
		ibc_error("boot tcp: gather root %d out of range (size %d)", root, b->size);
		return IBC_ERR_INVAL;
	}
	size_t total = len * (size_t)b->size;
	if (b->rank != 0) {
		rc = frame_send(t, 0, FR_GATHER, send, len);
		if (rc || b->rank != root)
			return rc;
		return frame_recv(t, 0, FR_GATHER_RESULT, recv, total);
	}
	char *acc = recv;
	if (root != 0) {
		acc = malloc(total ? total : 1);
		if (!acc) {
			ibc_error("boot tcp: out of memory for a %zu-byte gather", total);
			return IBC_ERR_NOMEM;
		}
	}
	if (len)
		memmove(acc, send, len);
	for (int r = 1; r < b->size && rc == IBC_OK; r++)
		rc = frame_recv(t, r, FR_GATHER, acc + (size_t)r * len, len);
	if (rc == IBC_OK && root != 0)
		rc = frame_send(t, root, FR_GATHER_RESULT, acc, total);
	if (root != 0)
		free(acc);
	return rc;
}

static int tcp_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{
	struct tcp_boot *t = tcp_of(b);
	int rc = check_ready(t);
	if (rc)
		return rc;
	if (root < 0 || root >= b->size) {
		ibc_error("boot tcp: bcast root %d out of range (size %d)", root, b->size);
		return IBC_ERR_INVAL;
	}
	if (b->rank != 0) {
		if (b->rank == root)
			return frame_send(t, 0, FR_BCAST, buf, len);
		return frame_recv(t, 0, FR_BCAST, buf, len);
	}
	if (root != 0) {
		rc = frame_recv(t, root, FR_BCAST, buf, len);
		if (rc)
			return rc;
	}
	for (int r = 1; r < b->size; r++) {
		if (r == root)
			continue;
		rc = frame_send(t, r, FR_BCAST, buf, len);
		if (rc)
			return rc;
	}
	return IBC_OK;
}

/* everybody sends `up` to rank 0, rank 0 answers `down` to everybody */
static int star_sync(struct tcp_boot *t, uint32_t up, uint32_t down)
{
	int rc;
	if (t->pub.rank != 0) {
		rc = frame_send(t, 0, up, NULL, 0);
		if (rc)
			return rc;
		return frame_recv(t, 0, down, NULL, 0);
	}
	for (int r = 1; r < t->pub.size; r++) {
		rc = frame_recv(t, r, up, NULL, 0);
		if (rc)
			return rc;
	}
	for (int r = 1; r < t->pub.size; r++) {
		rc = frame_send(t, r, down, NULL, 0);
		if (rc)
			return rc;
	}
	return IBC_OK;
}

static int tcp_barrier(struct ibc_boot *b)
{
	struct tcp_boot *t = tcp_of(b);
	int rc = check_ready(t);
	if (rc)
		return rc;
	return star_sync(t, FR_BARRIER, FR_BARRIER_RESULT);
}

/* ------------------------------------------------------ bulletin board -- */

static void kv_clear(struct kv_table *kv)
{
	for (size_t i = 0; i < kv->n; i++) {
		free(kv->e[i].key);
		free(kv->e[i].val);
	}
	free(kv->e);
	kv->e = NULL;
	kv->n = kv->cap = 0;
}

static int kv_set(struct kv_table *kv, const char *key, size_t keylen, const void *val, size_t len)
{
	struct kv_entry *e = NULL;
	for (size_t i = 0; i < kv->n; i++) {
		if (strlen(kv->e[i].key) == keylen && memcmp(kv->e[i].key, key, keylen) == 0) {
			e = &kv->e[i];
			break;
		}
	}
	void *v = malloc(len ? len : 1);
	if (!v)
		goto err_nomem;
	if (len)
		memcpy(v, val, len);
	if (e) {
		free(e->val);
		e->val = v;
		e->len = len;
		return IBC_OK;
	}
	if (kv->n == kv->cap) {
		size_t cap = kv->cap ? kv->cap * 2 : 16;
		struct kv_entry *ne = realloc(kv->e, cap * sizeof(*ne));
		if (!ne)
			goto err_free_val;
		kv->e = ne;
		kv->cap = cap;
	}
	char *k = malloc(keylen + 1);
	if (!k)
		goto err_free_val;
	memcpy(k, key, keylen);
	k[keylen] = '\0';
	kv->e[kv->n++] = (struct kv_entry){ .key = k, .val = v, .len = len };
	return IBC_OK;

err_free_val:
	free(v);
err_nomem:
	ibc_error("boot tcp: out of memory for a bulletin-board entry");
	return IBC_ERR_NOMEM;
}

/* [u32 keylen][u32 vallen][key][val] ... */
static int kv_serialize(const struct kv_table *kv, void **out, size_t *outlen)
{
	size_t total = 0;
	for (size_t i = 0; i < kv->n; i++)
		total += 8 + strlen(kv->e[i].key) + kv->e[i].len;
	char *p = malloc(total ? total : 1);
	if (!p) {
		ibc_error("boot tcp: out of memory serialising %zu bulletin-board bytes", total);
		return IBC_ERR_NOMEM;
	}
	char *w = p;
	for (size_t i = 0; i < kv->n; i++) {
		uint32_t kl = (uint32_t)strlen(kv->e[i].key), vl = (uint32_t)kv->e[i].len;
		uint32_t h[2] = { htonl(kl), htonl(vl) };
		memcpy(w, h, 8);
		memcpy(w + 8, kv->e[i].key, kl);
		if (vl)
			memcpy(w + 8 + kl, kv->e[i].val, vl);
		w += 8 + kl + vl;
	}
	*out = p;
	*outlen = total;
	return IBC_OK;
}

static int kv_merge(struct kv_table *kv, const void *buf, size_t len, int from)
{
	const char *p = buf, *end = p + len;
	while (p < end) {
		uint32_t h[2];
		if ((size_t)(end - p) < 8)
			goto err_malformed;
		memcpy(h, p, 8);
		size_t kl = ntohl(h[0]), vl = ntohl(h[1]);
		p += 8;
		if (kl == 0 || (size_t)(end - p) < kl || (size_t)(end - p) - kl < vl)
			goto err_malformed;
		if (memchr(p, '\0', kl))
			goto err_malformed;
		int rc = kv_set(kv, p, kl, p + kl, vl);
		if (rc)
			return rc;
		p += kl + vl;
	}
	return IBC_OK;

err_malformed:
	ibc_error("boot tcp: malformed bulletin-board data from rank %d", from);
	return IBC_ERR_PROTO;
}

static int tcp_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{
	struct tcp_boot *t = tcp_of(b);
	if (!key || !*key || strlen(key) > 1024 || len > (1u << 24)) {
		ibc_error("boot tcp: put: key must be 1..1024 bytes and value at most 16 MiB");
		return IBC_ERR_INVAL;
	}
	return kv_set(&t->pending, key, strlen(key), val, len);
}

static int tcp_fence(struct ibc_boot *b)
{
	struct tcp_boot *t = tcp_of(b);
	int rc = check_ready(t);
	if (rc)
		return rc;
	void *mine = NULL, *all = NULL;
	size_t mine_len = 0, all_len = 0;
	rc = kv_serialize(&t->pending, &mine, &mine_len);
	if (rc)
		return rc;
	kv_clear(&t->pending);
	if (b->rank != 0) {
		rc = frame_send(t, 0, FR_FENCE, mine, mine_len);
		if (rc == IBC_OK)
			rc = frame_recv_alloc(t, 0, FR_FENCE_RESULT, &all, &all_len);
		if (rc == IBC_OK)
			rc = kv_merge(&t->board, all, all_len, 0);
		goto out_free;
	}
	/* rank 0: merge in rank order (a later rank's put of the same key wins),
	 * then send the batch of this fence's puts to everybody */
	struct kv_table batch = { 0 };
	rc = kv_merge(&batch, mine, mine_len, 0);
	for (int r = 1; r < b->size && rc == IBC_OK; r++) {
		void *in;
		size_t in_len;
		rc = frame_recv_alloc(t, r, FR_FENCE, &in, &in_len);
		if (rc == IBC_OK) {
			rc = kv_merge(&batch, in, in_len, r);
			free(in);
		}
	}
	if (rc == IBC_OK)
		rc = kv_serialize(&batch, &all, &all_len);
	for (int r = 1; r < b->size && rc == IBC_OK; r++)
		rc = frame_send(t, r, FR_FENCE_RESULT, all, all_len);
	if (rc == IBC_OK)
		rc = kv_merge(&t->board, all, all_len, 0);
	kv_clear(&batch);
out_free:
	free(all);
	free(mine);
	return rc;
}

static int tcp_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{
	struct tcp_boot *t = tcp_of(b);
	for (size_t i = 0; i < t->board.n; i++) {
		struct kv_entry *e = &t->board.e[i];
		if (strcmp(e->key, key) != 0)
			continue;
		if (len)
			*len = e->len;
		if (e->len > cap) {
			ibc_error("boot tcp: get %s: value of %zu bytes does not fit in %zu", key,
				  e->len, cap);
			return IBC_ERR_INVAL;
		}
		if (e->len)
			memcpy(val, e->val, e->len);
		return IBC_OK;
	}
	return IBC_ERR_NOTFOUND;
}

/* ------------------------------------------------------- abort / close -- */

static void close_fds(struct tcp_boot *t)
{
	int n = t->pub.rank == 0 ? t->pub.size : 1;
	for (int r = 0; r < n; r++) {
		if (t->fd[r] >= 0)
			close(t->fd[r]);
		t->fd[r] = -1;
	}
}

static void tcp_abort(struct ibc_boot *b, int code, const char *why)
{
	struct tcp_boot *t = tcp_of(b);
	char msg[8 + TCP_ABORT_WHY_MAX];
	uint32_t w[2] = { htonl((uint32_t)code), htonl((uint32_t)b->rank) };
	size_t wl = why ? strnlen(why, TCP_ABORT_WHY_MAX - 1) : 0;
	memcpy(msg, w, 8);
	if (wl)
		memcpy(msg + 8, why, wl);
	ibc_error("boot tcp: rank %d aborts the job (code %d): %s", b->rank, code,
		  why ? why : "no reason given");
	if (!t->aborted) {
		if (b->rank == 0) {
			abort_forward(t, 0, msg, 8 + wl);
		} else if (t->fd[0] >= 0) {
			uint32_t hdr[4] = { htonl(TCP_MAGIC), htonl(FR_ABORT), 0, htonl((uint32_t)(8 + wl)) };
			struct iovec iov[2] = { { hdr, sizeof(hdr) }, { msg, 8 + wl } };
			struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
			if (sendmsg(t->fd[0], &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				ibc_debug("boot tcp: abort to rank 0 not delivered: %s", strerror(errno));
		}
	}
	t->aborted = 1;
	/* closing makes every rank blocked on us see the end of the stream */
	close_fds(t);
}

static void tcp_free(struct tcp_boot *t)
{
	close_fds(t);
	kv_clear(&t->board);
	kv_clear(&t->pending);
	free(t->fd);
	free(t);
}

static int tcp_close(struct ibc_boot *b)
{
	struct tcp_boot *t = tcp_of(b);
	int rc = t->aborted ? IBC_ERR_INTERRUPTED : star_sync(t, FR_CLOSE, FR_CLOSE_RESULT);
	tcp_free(t);
	return rc;
}

static const struct ibc_boot_ops tcp_ops = {
	.name = "tcp",
	.allgather = tcp_allgather,
	.gather = tcp_gather,
	.bcast = tcp_bcast,
	.barrier = tcp_barrier,
	.put = tcp_put,
	.fence = tcp_fence,
	.get = tcp_get,
	.abort = tcp_abort,
	.close = tcp_close,
};

/* ---------------------------------------------------------------- open -- */

static int env_int(const char *name, long lo, long hi, long dflt, long *out)
{
	const char *s = getenv(name);
	if (!s || !*s) {
		if (dflt < lo) {
			ibc_error("boot tcp: %s is not set", name);
			return IBC_ERR_INVAL;
		}
		*out = dflt;
		return IBC_OK;
	}
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		ibc_error("boot tcp: %s=%s is not an integer in [%ld, %ld]", name, s, lo, hi);
		return IBC_ERR_INVAL;
	}
	*out = v;
	return IBC_OK;
}

static int parse_root(const char *spec, char *host, size_t hostcap, char *port, size_t portcap)
{
	if (!spec || !*spec) {
		ibc_error("boot tcp: IBC_BOOT_ROOT is not set (want host:port)");
		return IBC_ERR_INVAL;
	}
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || !colon[1]) {
		ibc_error("boot tcp: IBC_BOOT_ROOT=%s: want host:port", spec);
		return IBC_ERR_INVAL;
	}
	const char *h = spec;
	size_t hl = (size_t)(colon - spec);
	if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') { /* [v6addr]:port */
		h++;
		hl -= 2;
	}
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535 || hl >= hostcap || strlen(colon + 1) >= portcap) {
		ibc_error("boot tcp: IBC_BOOT_ROOT=%s: bad host or port", spec);
		return IBC_ERR_INVAL;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, portcap, "%s", colon + 1);
	return IBC_OK;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sock_tune(int fd)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		ibc_debug("boot tcp: TCP_NODELAY: %s", strerror(errno));
}

static int root_listen(const char *host, const char *port, int *out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	int gai = getaddrinfo(host, port, &hints, &res);
	if (gai) {
		ibc_error("boot tcp: resolve %s:%s: %s", host, port, gai_strerror(gai));
		return IBC_ERR_NOTFOUND;
	}
	int fd = -1, err = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		ibc_error("boot tcp: rank 0 cannot listen on %s:%s: %s", host, port, strerror(err));
		return IBC_ERR_SYS;
	}
	*out = fd;
	return IBC_OK;
}

static int connect_root(const char *host, const char *port, double timeout, int *out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	double deadline = now_s() + timeout;
	int err = 0;
	int logged = 0;
	for (;;) {
		struct addrinfo *res;
		int gai = getaddrinfo(host, port, &hints, &res);
		if (gai == 0) {
			for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
				int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
						ai->ai_protocol);
				if (fd < 0) {
					err = errno;
					continue;
				}
				if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
					freeaddrinfo(res);
					sock_tune(fd);
					*out = fd;
					return IBC_OK;
				}
				err = errno;
				close(fd);
			}
			freeaddrinfo(res);
		} else if (gai != EAI_AGAIN) {
			ibc_error("boot tcp: resolve %s:%s: %s", host, port, gai_strerror(gai));
			return IBC_ERR_NOTFOUND;
		}
		if (now_s() >= deadline)
			break;
		if (!logged++)
			ibc_debug("boot tcp: waiting for rank 0 at %s:%s (%s)", host, port,
				  err ? strerror(err) : "resolving");
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	ibc_error("boot tcp: cannot reach rank 0 at %s:%s within %.0f s: %s", host, port, timeout,
		  err ? strerror(err) : "name does not resolve");
	return IBC_ERR_TIMEOUT;
}

static void node_key_make(char key[TCP_NODE_LEN])
{
	memset(key, 0, TCP_NODE_LEN);
	const char *ovr = getenv("IBC_BOOT_NODENAME");
	if (ovr && *ovr) {
		snprintf(key, TCP_NODE_LEN, "%s", ovr);
		return;
	}
	char host[64] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	char boot_id[40] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(boot_id, sizeof(boot_id), f))
			boot_id[0] = '\0';
		fclose(f);
		boot_id[strcspn(boot_id, "\n")] = '\0';
	}
	snprintf(key, TCP_NODE_LEN, "%s/%s", host, boot_id);
}

/* rank 0 accepts size - 1 connections; each sends a hello {rank, size} */
static int root_accept_all(struct tcp_boot *t, int lfd, double timeout)
{
	double deadline = now_s() + timeout;
	int have = 0;
	while (have < t->pub.size - 1) {
		double left = deadline - now_s();
		if (left <= 0) {
			ibc_error("boot tcp: only %d of %d ranks connected within %.0f s", have + 1,
				  t->pub.size, timeout);
			return IBC_ERR_TIMEOUT;
		}
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int n = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno != EINTR) {
			ibc_error("boot tcp: poll on the listening socket: %s", strerror(errno));
			return IBC_ERR_SYS;
		}
		if (n <= 0)
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			ibc_error("boot tcp: accept: %s", strerror(errno));
			return IBC_ERR_SYS;
		}
		sock_tune(fd);
		/* the hello: header + {magic-ish rank, size} */
		uint32_t hdr[4], body[2];
		int rc = read_all(fd, hdr, sizeof(hdr), -1);
		if (rc == IBC_OK && (ntohl(hdr[0]) != TCP_MAGIC || ntohl(hdr[1]) != FR_HELLO ||
				     hdr[2] != 0 || ntohl(hdr[3]) != sizeof(body))) {
			ibc_warn("boot tcp: ignoring a connection that did not say hello");
			close(fd);
			continue;
		}
		if (rc == IBC_OK)
			rc = read_all(fd, body, sizeof(body), -1);
		if (rc) {
			close(fd);
			continue; /* a stray connection that went away; keep waiting */
		}
		long r = (long)ntohl(body[0]), sz = (long)ntohl(body[1]);
		if (sz != t->pub.size) {
			ibc_error("boot tcp: rank %ld says the job has %ld ranks, rank 0 says %d", r,
				  sz, t->pub.size);
			close(fd);
			return IBC_ERR_PROTO;
		}
		if (r < 1 || r >= t->pub.size || t->fd[r] >= 0) {
			ibc_error("boot tcp: rank %ld connected twice or is out of range (size %d)",
				  r, t->pub.size);
			close(fd);
			return IBC_ERR_PROTO;
		}
		t->fd[r] = fd;
		have++;
	}
	return IBC_OK;
}

static int topology_compute(struct tcp_boot *t)
{
	struct ibc_boot *b = &t->pub;
	char mine[TCP_NODE_LEN];
	node_key_make(mine);
	char *all = malloc((size_t)b->size * TCP_NODE_LEN);
	if (!all) {
		ibc_error("boot tcp: out of memory for the node table");
		return IBC_ERR_NOMEM;
	}
	int rc = tcp_allgather(b, mine, all, TCP_NODE_LEN);
	if (rc)
		goto out_free_all;
	/* node ids in order of each node's lowest rank */
	int my_node = -1, nodes = 0, local_rank = 0, local_size = 0;
	for (int r = 0; r < b->size; r++) {
		const char *kr = all + (size_t)r * TCP_NODE_LEN;
		int first = 1;
		for (int q = 0; q < r; q++) {
			if (memcmp(kr, all + (size_t)q * TCP_NODE_LEN, TCP_NODE_LEN) == 0) {
				first = 0;
				break;
			}
		}
		int same = memcmp(kr, mine, TCP_NODE_LEN) == 0;
		if (same && my_node < 0)
			my_node = nodes;
		if (same) {
			if (r < b->rank)
				local_rank++;
			local_size++;
		}
		if (first)
			nodes++;
	}
	b->node_id = my_node;
	b->num_nodes = nodes;
	b->local_rank = local_rank;
	b->local_size = local_size;
out_free_all:
	free(all);
	return rc;
}

int ibc_boot_tcp_open(struct ibc_boot **out)
{
	long rank, size, timeout;
	char host[256], port[16];
	int rc = env_int("IBC_BOOT_SIZE", 1, 1 << 20, -1, &size);
	if (rc == IBC_OK)
		rc = env_int("IBC_BOOT_RANK", 0, size - 1, -1, &rank);
	if (rc == IBC_OK)
		rc = env_int("IBC_BOOT_TIMEOUT", 1, 86400, 30, &timeout);
	if (rc == IBC_OK)
		rc = parse_root(getenv("IBC_BOOT_ROOT"), host, sizeof(host), port, sizeof(port));
	if (rc)
		return rc;

	struct tcp_boot *t = calloc(1, sizeof(*t));
	if (!t)
		goto err_nomem;
	t->fd = malloc((size_t)size * sizeof(int));
	if (!t->fd)
		goto err_free_t;
	for (long r = 0; r < size; r++)
		t->fd[r] = -1;
	t->pub.ops = &tcp_ops;
	t->pub.rank = (int)rank;
	t->pub.size = (int)size;
	t->pub.priv = t;

	if (rank == 0) {
		if (size > 1) {
			int lfd;
			rc = root_listen(host, port, &lfd);
			if (rc)
				goto err_free_boot;
			rc = root_accept_all(t, lfd, (double)timeout);
			close(lfd);
			if (rc)
				goto err_free_boot;
		}
	} else {
		rc = connect_root(host, port, (double)timeout, &t->fd[0]);
		if (rc)
			goto err_free_boot;
		uint32_t hello[2] = { htonl((uint32_t)rank), htonl((uint32_t)size) };
		rc = frame_send(t, 0, FR_HELLO, hello, sizeof(hello));
		if (rc)
			goto err_free_boot;
	}
	rc = topology_compute(t);
	if (rc)
		goto err_free_boot;
	ibc_debug("boot tcp: rank %d/%d node %d/%d local %d/%d via %s:%s", t->pub.rank,
		  t->pub.size, t->pub.node_id, t->pub.num_nodes, t->pub.local_rank,
		  t->pub.local_size, host, port);
	*out = &t->pub;
	return IBC_OK;

err_free_boot:
	tcp_free(t);
	return rc;
err_free_t:
	free(t);
err_nomem:
	ibc_error("boot tcp: out of memory");
	return IBC_ERR_NOMEM;
}
