/* pmi2 bootstrap: the PMI-2 wire protocol on the socket in PMI_FD, as a
 * process manager offers it (Slurm's srun --mpi=pmi2; MPICH's PMI v2 wire
 * protocol document).  After a PMI-1 style "cmd=init pmi_version=2" line,
 * every command is 6 ASCII digits of length and "cmd=name;key=value;...;"
 * (a ';' inside a value doubled).  Used here: fullinit, info-getjobattr
 * (PMI_process_mapping: the node of every rank), kvs-put, kvs-fence,
 * kvs-get, abort, finalize.
 *
 * The collectives are put/fence/get: every rank puts its block under a key
 * of this call's sequence number, one fence, then each rank gets what it
 * needs.  Values go hex encoded in chunks of 500 bytes (PMI-2 values are at
 * most 1024 characters).  A barrier is a fence. */
#include "boot/boot.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CHUNK 500           /* bytes per value: 1000 hex digits */
#define MSG_MAX 999999      /* the longest command: its length has 6 digits */
#define MAX_RANKS 1000000   /* the largest job (as the launcher's): no 8 GB map for a bad size */

struct pmi2 {
	int fd;
	char jobid[128];
	unsigned long seq;      /* collective calls so far (the same on every rank) */
	char msg[MSG_MAX + 1];  /* the last response */
};

static struct pmi2 *p2(struct ibc_boot *b)
{
	return b->priv;
}

/* ---------------------------------------------------------------- wire -- */

static int wire_write(int fd, const char *s, size_t n)
{
	if (ibc_fs_write_all(fd, s, n) != IBC_OK) {
		ibc_error("boot pmi2: write to the process manager: %s", strerror(errno));
		return IBC_ERR_IO;
	}
	return IBC_OK;
}

/* The read deadline: IBC_TIMEOUT seconds (`ibchar run` sets it to its
 * launch's deadline), else 600; 0: none.  A fence waits for every rank, so
 * one that never comes ends the wait of all the others. */
static double read_timeout_s(void)
{
	const char *e = getenv("IBC_TIMEOUT");
	char *end;
	double t;

	if (e == NULL || *e == '\0')
		return 600;
	t = strtod(e, &end);
	return *end == '\0' && t >= 0 ? t : 600;
}

/* ibc_fs_read_all with a deadline: IBC_ERR_TIMEOUT (said, with this rank
 * and the deadline) when the process manager sends nothing for that long. */
static int read_timed(int fd, char *s, size_t n)
{
	double t = read_timeout_s();
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	while (n > 0 && t > 0) {
		r = poll(&p, 1, t * 1000 > INT_MAX ? INT_MAX : (int)(t * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			const char *rank = getenv("PMI_RANK");

			ibc_error("boot pmi2: rank %s: no answer from the process manager (srun's step daemon on "
				  "this node) in %g s (IBC_TIMEOUT): some rank never reached the fence, or the "
				  "step is lost", rank != NULL ? rank : "?", t);
			return IBC_ERR_TIMEOUT;
		}
		if (r < 0)
			return IBC_ERR_IO;
		r = (int)read(fd, s, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? IBC_ERR_CLOSED : IBC_ERR_IO;
		s += r;
		n -= (size_t)r;
	}
	return n == 0 ? IBC_OK : ibc_fs_read_all(fd, s, n);
}

static int wire_read(int fd, char *s, size_t n)
{
	int rc = read_timed(fd, s, n);

	if (rc == IBC_ERR_TIMEOUT)
		return rc;
	if (rc != IBC_OK)
		ibc_error("boot pmi2: the process manager closed the connection%s%s",
			  rc == IBC_ERR_IO ? ": " : "", rc == IBC_ERR_IO ? strerror(errno) : "");
	return rc == IBC_OK ? IBC_OK : IBC_ERR_IO;
}

/* One command: "cmd=NAME;" and the formatted fields, length prefixed. */
static int cmd_send(struct pmi2 *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cmd_send(struct pmi2 *p, const char *fmt, ...)
{
	char buf[4096 + 8];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + 6, sizeof(buf) - 6, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf) - 6) {
		ibc_error("boot pmi2: a command of %d bytes is too long", n);
		return IBC_ERR_INVAL;
	}
	char len[8];

	snprintf(len, sizeof(len), "%6d", n);
	memcpy(buf, len, 6);
	ibc_debug("boot pmi2: -> %s", buf + 6);
	return wire_write(p->fd, buf, (size_t)n + 6);
}

/* The next response into p->msg; IBC_ERR_PROTO when it is not `want`. */
static int cmd_recv(struct pmi2 *p, const char *want)
{
	char len[7] = "";
	size_t n, wl = strlen(want);
	int rc = wire_read(p->fd, len, 6);

	if (rc != IBC_OK)
		return rc;
	n = (size_t)strtoul(len, NULL, 10);
	if (n == 0 || n > MSG_MAX) {
		ibc_error("boot pmi2: bad length '%s' from the process manager", len);
		return IBC_ERR_PROTO;
	}
	rc = wire_read(p->fd, p->msg, n);
	if (rc != IBC_OK)
		return rc;
	p->msg[n] = '\0';
	ibc_debug("boot pmi2: <- %s", p->msg);
	if (strncmp(p->msg, "cmd=", 4) != 0 || strncmp(p->msg + 4, want, wl) != 0 ||
	    p->msg[4 + wl] != ';') {
		ibc_error("boot pmi2: expected %s, got '%.80s'", want, p->msg);
		return IBC_ERR_PROTO;
	}
	return IBC_OK;
}

/* The value of key in p->msg (";;" undoubled) into val; NULL when absent. */
static const char *field(const struct pmi2 *p, const char *key, char *val, size_t cap)
{
	size_t kl = strlen(key);
	const char *s = p->msg;

	while (*s) {
		const char *e;

		if (strncmp(s, key, kl) == 0 && s[kl] == '=') {
			size_t o = 0;

			for (e = s + kl + 1; *e && !(e[0] == ';' && e[1] != ';'); e++) {
				if (e[0] == ';')
					e++; /* ";;" is one ';' */
				if (o + 1 < cap)
					val[o++] = *e;
			}
			val[o] = '\0';
			return val;
		}
		/* to the next field: past a single ';' */
		for (e = s; *e && !(e[0] == ';' && e[1] != ';'); e++)
			if (e[0] == ';')
				e++;
		s = *e ? e + 1 : e;
	}
	return NULL;
}

/* IBC_OK when the response says rc=0, else its errmsg, logged. */
static int rc_of(const struct pmi2 *p, const char *what)
{
	char v[256], m[256];

	if (field(p, "rc", v, sizeof(v)) != NULL && strcmp(v, "0") == 0)
		return IBC_OK;
	ibc_error("boot pmi2: %s failed: rc=%s%s%s", what, field(p, "rc", v, sizeof(v)) ? v : "?",
		  field(p, "errmsg", m, sizeof(m)) ? " " : "", field(p, "errmsg", m, sizeof(m)) ? m : "");
	return IBC_ERR_REMOTE;
}

/* ------------------------------------------------------------ kvs ------ */

static int kvs_put(struct pmi2 *p, const char *key, const char *val)
{
	int rc = cmd_send(p, "cmd=kvs-put;key=%s;value=%s;", key, val);

	if (rc == IBC_OK)
		rc = cmd_recv(p, "kvs-put-response");
	return rc == IBC_OK ? rc_of(p, "kvs-put") : rc;
}

static int kvs_fence(struct pmi2 *p)
{
	int rc = cmd_send(p, "cmd=kvs-fence;");

	if (rc == IBC_OK)
		rc = cmd_recv(p, "kvs-fence-response");
	return rc == IBC_OK ? rc_of(p, "kvs-fence") : rc;
}

/* IBC_ERR_NOTFOUND (not logged) when the key is not there. */
static int kvs_get(struct pmi2 *p, int src, const char *key, char *val, size_t cap)
{
	char found[16];
	int rc = cmd_send(p, "cmd=kvs-get;jobid=%s;srcid=%d;key=%s;", p->jobid, src, key);

	if (rc == IBC_OK)
		rc = cmd_recv(p, "kvs-get-response");
	if (rc != IBC_OK)
		return rc;
	if ((field(p, "found", found, sizeof(found)) == NULL &&
	     field(p, "flag", found, sizeof(found)) == NULL) ||
	    strcasecmp(found, "true") != 0)
		return IBC_ERR_NOTFOUND;
	rc = rc_of(p, "kvs-get");
	if (rc == IBC_OK && field(p, "value", val, cap) == NULL)
		rc = IBC_ERR_PROTO;
	return rc;
}

static void hex_put(const unsigned char *d, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hx[d[i] >> 4];
		out[2 * i + 1] = hx[d[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hex_get(const char *s, unsigned char *d, size_t n)
{
	size_t i;

	if (strlen(s) != 2 * n)
		return IBC_ERR_PROTO;
	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return IBC_ERR_PROTO;
		d[i] = (unsigned char)v;
	}
	return IBC_OK;
}

/* len bytes under base.0, base.1, ... */
static int blob_put(struct pmi2 *p, const char *base, const void *data, size_t len)
{
	char key[96], val[2 * CHUNK + 1];
	size_t off = 0, c = 0;
	int rc = IBC_OK;

	do {
		size_t n = len - off < CHUNK ? len - off : CHUNK;

		snprintf(key, sizeof(key), "%s-%zu", base, c++);
		hex_put((const unsigned char *)data + off, n, val);
		rc = kvs_put(p, key, val);
		off += n;
	} while (rc == IBC_OK && off < len);
	return rc;
}

static int blob_get(struct pmi2 *p, int src, const char *base, void *data, size_t len)
{
	char key[96], val[2 * CHUNK + 2];
	size_t off = 0, c = 0;
	int rc = IBC_OK;

	do {
		size_t n = len - off < CHUNK ? len - off : CHUNK;

		snprintf(key, sizeof(key), "%s-%zu", base, c++);
		rc = kvs_get(p, src, key, val, sizeof(val));
		if (rc == IBC_ERR_NOTFOUND)
			ibc_error("boot pmi2: key %s of rank %d missing after the fence", key, src);
		if (rc == IBC_OK && (rc = hex_get(val, (unsigned char *)data + off, n)) != IBC_OK)
			ibc_error("boot pmi2: key %s: %zu bytes expected, got %zu hex digits", key, n,
				  strlen(val));
		off += n;
	} while (rc == IBC_OK && off < len);
	return rc;
}

/* ----------------------------------------------------------- ops ------- */

static int q_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{
	struct pmi2 *p = p2(b);
	char base[64];
	unsigned long s = p->seq++;
	int r, rc;

	snprintf(base, sizeof(base), "ibc%lu-%d", s, b->rank);
	rc = blob_put(p, base, send, len);
	if (rc == IBC_OK)
		rc = kvs_fence(p);
	for (r = 0; r < b->size && rc == IBC_OK; r++) {
		if (r == b->rank) {
			memcpy((char *)recv + (size_t)r * len, send, len);
			continue;
		}
		snprintf(base, sizeof(base), "ibc%lu-%d", s, r);
		rc = blob_get(p, r, base, (char *)recv + (size_t)r * len, len);
	}
	return rc;
}

static int q_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	struct pmi2 *p = p2(b);
	char base[64];
	unsigned long s = p->seq++;
	int r, rc;

	snprintf(base, sizeof(base), "ibc%lu-%d", s, b->rank);
	rc = b->rank == root ? IBC_OK : blob_put(p, base, send, len);
	if (rc == IBC_OK)
		rc = kvs_fence(p);
	for (r = 0; b->rank == root && r < b->size && rc == IBC_OK; r++) {
		if (r == root) {
			memcpy((char *)recv + (size_t)r * len, send, len);
			continue;
		}
		snprintf(base, sizeof(base), "ibc%lu-%d", s, r);
		rc = blob_get(p, r, base, (char *)recv + (size_t)r * len, len);
	}
	return rc;
}

static int q_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{
	struct pmi2 *p = p2(b);
	char base[64];
	int rc;

	snprintf(base, sizeof(base), "ibc%lu-b", p->seq++);
	rc = b->rank == root ? blob_put(p, base, buf, len) : IBC_OK;
	if (rc == IBC_OK)
		rc = kvs_fence(p);
	if (rc == IBC_OK && b->rank != root)
		rc = blob_get(p, root, base, buf, len);
	return rc;
}

static int q_barrier(struct ibc_boot *b)
{
	return kvs_fence(p2(b));
}

/* A user key as PMI-2 allows keys ([-_A-Za-z0-9], at most 64): "u_" and
 * the key with every other byte (and '_', '-') as _XX; IBC_ERR_INVAL
 * (logged) when too long.  The chunks add "-<i>", the length "-n". */
static int user_key(const char *key, char *out, size_t cap)
{
	static const char hx[] = "0123456789ABCDEF";
	size_t o = 0, i;

	out[o++] = 'u';
	out[o++] = '_';
	for (i = 0; key[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)key[i];
		int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');

		if (o + 4 >= cap || o + 4 > 56)
			break;
		if (plain) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '_';
			out[o++] = hx[ch >> 4];
			out[o++] = hx[ch & 15];
		}
	}
	out[o] = '\0';
	if (key[i] != '\0') {
		ibc_error("boot pmi2: key '%s' is too long for PMI-2's 64-character keys", key);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

/* the bulletin board: "u_KEY-n" holds the length, then the chunks */
static int q_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{
	char k[96], kn[104], n[32];
	int rc = user_key(key, k, sizeof(k));

	snprintf(kn, sizeof(kn), "%s-n", k);
	snprintf(n, sizeof(n), "%zu", len);
	if (rc == IBC_OK)
		rc = kvs_put(p2(b), kn, n);
	return rc == IBC_OK ? blob_put(p2(b), k, val, len) : rc;
}

static int q_fence(struct ibc_boot *b)
{
	return kvs_fence(p2(b));
}

static int q_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{
	char k[96], kn[104], n[32];
	size_t l;
	int rc = user_key(key, k, sizeof(k));

	snprintf(kn, sizeof(kn), "%s-n", k);
	if (rc == IBC_OK)
		rc = kvs_get(p2(b), -1, kn, n, sizeof(n));
	if (rc != IBC_OK)
		return rc;
	l = (size_t)strtoull(n, NULL, 10);
	if (len != NULL)
		*len = l;
	if (l > cap)
		return IBC_ERR_NOMEM;
	return l == 0 ? IBC_OK : blob_get(p2(b), -1, k, val, l);
}

static void q_abort(struct ibc_boot *b, int code, const char *why)
{
	char msg[256];
	size_t i, o = 0;

	for (i = 0; why != NULL && why[i] && o + 2 < sizeof(msg); i++) {
		if (why[i] == ';')
			msg[o++] = ';'; /* doubled */
		msg[o++] = why[i];
	}
	msg[o] = '\0';
	(void)code;
	(void)cmd_send(p2(b), "cmd=abort;isworld=TRUE;msg=%s;", msg);
}

static int q_close(struct ibc_boot *b)
{
	struct pmi2 *p = p2(b);
	int rc = cmd_send(p, "cmd=finalize;");

	if (rc == IBC_OK)
		rc = cmd_recv(p, "finalize-response");
	if (rc == IBC_OK)
		rc = rc_of(p, "finalize");
	close(p->fd);
	free(p);
	free(b);
	return rc;
}

static const struct ibc_boot_ops ops = {
	.name = "pmi2",
	.allgather = q_allgather,
	.gather = q_gather,
	.bcast = q_bcast,
	.barrier = q_barrier,
	.put = q_put,
	.fence = q_fence,
	.get = q_get,
	.abort = q_abort,
	.close = q_close,
};

/* --------------------------------------------------- process mapping -- */

/* A number in [0, INT_MAX] at *s (spaces before it skipped); advances *s.
 * IBC_ERR_PROTO when there is none or it is too big. */
static int map_int(const char **s, int *out)
{
	const char *p = *s;
	long long v = 0;

	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return IBC_ERR_PROTO;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return IBC_ERR_PROTO;
	}
	*out = (int)v;
	*s = p;
	return IBC_OK;
}

/* The character c at *s (spaces before it skipped); advances past it. */
static int map_char(const char **s, char c)
{
	const char *p = *s;

	while (*p == ' ')
		p++;
	if (*p != c)
		return IBC_ERR_PROTO;
	*s = p + 1;
	return IBC_OK;
}

/* One block "(start,nodes,per_node)" at *s. */
static int map_block(const char **s, int blk[3])
{
	int rc = map_char(s, '(');

	if (rc == IBC_OK)
		rc = map_int(s, &blk[0]);
	if (rc == IBC_OK)
		rc = map_char(s, ',');
	if (rc == IBC_OK)
		rc = map_int(s, &blk[1]);
	if (rc == IBC_OK)
		rc = map_char(s, ',');
	if (rc == IBC_OK)
		rc = map_int(s, &blk[2]);
	if (rc == IBC_OK)
		rc = map_char(s, ')');
	return rc;
}

/* PMI_process_mapping "(vector,(start,nodes,per_node),...)": the node of
 * each rank, the blocks repeated until every rank has one.  The whole text
 * is parsed, any number of blocks; a node id given to a rank must be below
 * size (so start+n cannot overflow and num_nodes counts nodes of this job).
 * IBC_ERR_PROTO (logged, naming the place) otherwise. */
int ibc_boot_pmi2_mapping(const char *map, int size, int *node_of)
{
	const char *s = map, *first;
	int blk[3], r = 0, nb = 0, n, c;

	if (size < 1 || map_char(&s, '(') != IBC_OK || strncmp(s, "vector", 6) != 0) {
		ibc_error("boot pmi2: PMI_process_mapping '%.40s' is not a (vector,...)", map);
		return IBC_ERR_PROTO;
	}
	s += 6;
	first = s;
	/* check the whole text first: any error names where it is */
	while (map_char(&s, ',') == IBC_OK) {
		if (map_block(&s, blk) != IBC_OK || blk[1] < 1 || blk[2] < 1) {
			ibc_error("boot pmi2: PMI_process_mapping: bad block %d near '%.40s'", nb, s);
			return IBC_ERR_PROTO;
		}
		nb++;
	}
	if (map_char(&s, ')') != IBC_OK || *s != '\0' || nb == 0) {
		ibc_error("boot pmi2: PMI_process_mapping: %s near '%.40s'", nb == 0 ? "no block"
			  : *s == '\0' ? "cut short, no closing ')'" : "junk after the blocks", s);
		return IBC_ERR_PROTO;
	}
	/* then assign: the blocks in turn, from the first again after the last */
	while (r < size) {
		s = first;
		while (r < size && map_char(&s, ',') == IBC_OK && map_block(&s, blk) == IBC_OK) {
			for (n = 0; n < blk[1] && r < size; n++) {
				if (blk[0] >= size || n >= size - blk[0]) { /* no start+n overflow */
					ibc_error("boot pmi2: PMI_process_mapping: block (%d,%d,%d) gives rank %d "
						  "a node id beyond the job's %d ranks", blk[0], blk[1], blk[2], r, size);
					return IBC_ERR_PROTO;
				}
				for (c = 0; c < blk[2] && r < size; c++)
					node_of[r++] = blk[0] + n;
			}
		}
	}
	return IBC_OK;
}

/* PMI_FD: a decimal descriptor that is open. */
static int pmi2_fd_parse(const char *text, int *fd)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v < 0 || v > INT_MAX) {
		ibc_error("boot pmi2: PMI_FD='%.40s' is not a file descriptor number", text);
		return IBC_ERR_INVAL;
	}
	if (fcntl((int)v, F_GETFD) < 0) {
		ibc_error("boot pmi2: PMI_FD=%ld is not an open descriptor", v);
		return IBC_ERR_INVAL;
	}
	*fd = (int)v;
	return IBC_OK;
}

/* The node of every rank from the job's PMI_process_mapping, its whole
 * value read (up to MSG_MAX); every rank its own node, with a warning, when
 * the process manager has none; IBC_ERR_PROTO when it has a bad one. */
static int pmi2_node_map(struct pmi2 *p, int size, int *node_of)
{
	char found[16], *v = NULL;
	int rc = cmd_send(p, "cmd=info-getjobattr;key=PMI_process_mapping;"), r;

	if (rc == IBC_OK)
		rc = cmd_recv(p, "info-getjobattr-response");
	if (rc != IBC_OK)
		return rc;
	v = malloc(MSG_MAX + 1);
	if (v == NULL)
		return IBC_ERR_NOMEM;
	if ((field(p, "found", found, sizeof(found)) != NULL && strcasecmp(found, "true") != 0) ||
	    field(p, "value", v, MSG_MAX + 1) == NULL) {
		ibc_warn("boot pmi2: no PMI_process_mapping: every rank taken as its own node");
		for (r = 0; r < size; r++)
			node_of[r] = r;
	} else {
		rc = ibc_boot_pmi2_mapping(v, size, node_of);
	}
	free(v);
	return rc;
}

/* ------------------------------------------------------------ open ----- */

int ibc_boot_pmi2_open(struct ibc_boot **out)
{
	const char *fd_env = getenv("PMI_FD"), *jobid = getenv("PMI_JOBID");
	const char *rank_env = getenv("PMI_RANK");
	const char hello[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
	struct ibc_boot *b = NULL;
	struct pmi2 *p = NULL;
	char line[256], v[1024];
	int *node_of = NULL, rc, r;
	size_t n = 0;

	*out = NULL;
	if (fd_env == NULL)
		return IBC_ERR_NOTFOUND;
	b = calloc(1, sizeof(*b));
	p = calloc(1, sizeof(*p));
	if (b == NULL || p == NULL) {
		rc = IBC_ERR_NOMEM;
		goto fail_free;
	}
	rc = pmi2_fd_parse(fd_env, &p->fd);
	if (rc != IBC_OK)
		goto fail_free;
	snprintf(p->jobid, sizeof(p->jobid), "%s", jobid != NULL ? jobid : "");
	/* the PMI-1 style greeting, answered by one line */
	rc = wire_write(p->fd, hello, sizeof(hello) - 1);
	while (rc == IBC_OK && n + 1 < sizeof(line)) {
		rc = wire_read(p->fd, line + n, 1);
		if (rc == IBC_OK && line[n++] == '\n')
			break;
	}
	line[n] = '\0';
	if (rc == IBC_OK && (strstr(line, "cmd=response_to_init") == NULL || strstr(line, "rc=0") == NULL)) {
		ibc_error("boot pmi2: the process manager does not speak PMI-2: '%.80s' (srun --mpi=pmi2?)",
			  line);
		rc = IBC_ERR_PROTO;
	}
	if (rc == IBC_OK)
		rc = cmd_send(p, "cmd=fullinit;pmijobid=%s;pmirank=%s;threaded=FALSE;", p->jobid,
			      rank_env != NULL ? rank_env : "-1");
	if (rc == IBC_OK)
		rc = cmd_recv(p, "fullinit-response");
	if (rc == IBC_OK)
		rc = rc_of(p, "fullinit");
	if (rc == IBC_OK) {
		const char *q;

		b->rank = -1;
		b->size = 0;
		if (field(p, "rank", v, sizeof(v)) && (q = v, map_int(&q, &r) == IBC_OK) && *q == '\0')
			b->rank = r;
		if (field(p, "size", v, sizeof(v)) && (q = v, map_int(&q, &r) == IBC_OK) && *q == '\0')
			b->size = r;
		if (b->size < 1 || b->size > MAX_RANKS || b->rank < 0 || b->rank >= b->size) {
			ibc_error("boot pmi2: fullinit gave rank %d of %d (at most %d ranks)", b->rank, b->size,
				  MAX_RANKS);
			rc = IBC_ERR_PROTO;
		}
	}
	/* where every rank is: the node id, the ranks of this node */
	if (rc == IBC_OK) {
		node_of = calloc((size_t)b->size, sizeof(*node_of));
		rc = node_of == NULL ? IBC_ERR_NOMEM : pmi2_node_map(p, b->size, node_of);
	}
	if (rc == IBC_OK) {
		b->node_id = node_of[b->rank];
		for (r = 0; r < b->size; r++) {
			if (node_of[r] + 1 > b->num_nodes)
				b->num_nodes = node_of[r] + 1;
			if (node_of[r] == b->node_id) {
				if (r < b->rank)
					b->local_rank++;
				b->local_size++;
			}
		}
	}
	free(node_of);
	if (rc != IBC_OK)
		goto fail_close;
	b->ops = &ops;
	b->priv = p;
	*out = b;
	return IBC_OK;

fail_close:
	close(p->fd);
fail_free:
	free(p);
	free(b);
	return rc;
}
