/* The node agent event loop: tree links, local processes, the process
 * protocol (PMI-1 + ibchar commands), collectives, bulletin board with the
 * four cache policies, output forwarding and process health.  Used by the
 * launcher (root) and by every node launch agent (NLA). */
#define _GNU_SOURCE
#include "launcher/agent_loop.h"
#include <stdarg.h>
#include "launcher/proto.h"
#include "launcher/tree.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define IBC_LAUNCH_CONNECT_TIMEOUT 30 /* s for a started node agent to say HELLO */

enum { WAIT_NONE = 0, WAIT_COLL, WAIT_BARRIER, WAIT_RECV, WAIT_GET, WAIT_PMIGET };

struct ibc_launch_msgq {
	struct ibc_launch_msgq *next;
	int src, tag;
	size_t len;
	unsigned char data[];
};

struct ibc_launch_coll {
	struct ibc_launch_coll *next;
	uint32_t seq;
	int op, root, have, sent;
	struct ibc_launch_buf ent;
	uint32_t nent;
	struct ibc_launch_buf kv;
	uint32_t nkv;
};

struct ibc_launch_getwait {
	struct ibc_launch_getwait *next;
	char *key;
	int proc;  /* local process index, or -1 */
	int child; /* child link index, or -1 */
};

double ibc_launch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ibc_launch_fd_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void ibc_launch_fd_cloexec(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* ------------------------------------------------------------ sending --- */

static void link_send(struct ibc_launch_agent *a, struct ibc_launch_conn *c, int type, uint32_t src,
		      uint32_t dst, uint32_t seq, uint32_t aux, const void *p, size_t n)
{
	struct ibc_launch_hdr h = { .type = (uint8_t)type, .src = src, .dst = dst, .seq = seq, .aux = aux };

	if (c->fd < 0)
		return;
	ibc_launch_buf_put_frame(&c->out, &h, p, n);
	a->ctr.msgs_sent++;
	a->ctr.bytes_sent += IBC_LAUNCH_WIRE_HDR + n;
}

static void send_up(struct ibc_launch_agent *a, int type, uint32_t src, uint32_t dst, uint32_t seq,
		    uint32_t aux, const void *p, size_t n)
{
	link_send(a, &a->parent, type, src, dst, seq, aux, p, n);
}

static void proc_write(struct ibc_launch_proc *p, const char *line, const void *payload, size_t n)
{
	if (p->sock < 0)
		return;
	ibc_launch_buf_append(&p->out, line, strlen(line));
	if (n > 0)
		ibc_launch_buf_append(&p->out, payload, n);
}

static void proc_replyf(struct ibc_launch_proc *p, const void *payload, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void proc_replyf(struct ibc_launch_proc *p, const void *payload, size_t n, const char *fmt, ...)
{
	char line[IBC_LAUNCH_LINE_MAX + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	proc_write(p, line, payload, n);
}

/* ------------------------------------------------------------ routing --- */

static int rank_node(const struct ibc_launch_agent *a, int r)
{
	return ibc_launch_rank_node(a->job.start, (int)a->job.nnodes, r);
}

static struct ibc_launch_proc *local_proc(struct ibc_launch_agent *a, int r)
{
	int i = r - a->first_rank;

	return (i >= 0 && i < a->nproc) ? &a->proc[i] : NULL;
}

/* Where a message for rank r goes from here: 0 local, 1 a child (*child
 * set), 2 the parent. */
static int route(struct ibc_launch_agent *a, int r, int *child)
{
	int t;

	if (a->flat || local_proc(a, r) != NULL)
		return 0;
	t = rank_node(a, r) + 1;
	if (t > a->me && ibc_launch_tree_in_subtree(t, a->me, a->k)) {
		*child = ibc_launch_tree_route_down(t, a->me, a->k) - a->first_child;
		return 1;
	}
	return 2;
}

/* ------------------------------------------------------------- failure --- */

static void sig_name(int sig, char *buf, size_t n)
{
	const char *s = sigabbrev_np(sig);

	snprintf(buf, n, "signal %d (SIG%s)", sig, s ? s : "?");
}

/* A process or agent failed: report up (NLA) or record and terminate (root). */
void ibc_launch_fail(struct ibc_launch_agent *a, int rank, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (a->me != 0) {
		if (!a->terminating)
			send_up(a, IBC_LAUNCH_MSG_FAIL, (uint32_t)rank, 0, 0, (uint32_t)code, msg, strlen(msg));
		return;
	}
	if (!a->failed) {
		a->failed = 1;
		a->fail_code = code;
		snprintf(a->fail_msg, sizeof(a->fail_msg), "%s", msg);
		ibc_debug("launch: job fails: %s", msg);
	}
	ibc_launch_terminate(a);
}

void ibc_launch_terminate(struct ibc_launch_agent *a)
{
	int i;

	if (a->terminating)
		return;
	a->terminating = 1;
	for (i = 0; i < a->nchild; i++)
		if (!a->child[i].done)
			link_send(a, &a->child[i], IBC_LAUNCH_MSG_TERMINATE, 0, 0, 0, 0, NULL, 0);
	for (i = 0; i < a->nproc; i++) {
		struct ibc_launch_proc *p = &a->proc[i];

		if (p->pid > 0 && !p->reaped)
			kill(-p->pid, SIGTERM);
	}
	a->kill_at = ibc_launch_now() + 1.0;
	a->final_deadline = ibc_launch_now() + 4.0;
}

static void proc_status_text(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status)) {
		char s[64];

		sig_name(WTERMSIG(status), s, sizeof(s));
		snprintf(buf, n, "was killed by %s", s);
	} else {
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
	}
}

int ibc_launch_status_code(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static const char *host_of(const struct ibc_launch_agent *a, int rank)
{
	int n = rank_node(a, rank);

	return n >= 0 ? a->job.hosts[n] : "?";
}

/* A protocol violation by a local process: error reply, log, end the job. */
static void proc_proto_error(struct ibc_launch_agent *a, struct ibc_launch_proc *p, const char *resp,
			     const char *why)
{
	proc_replyf(p, NULL, 0, "cmd=%s rc=-1 msg=%s", resp, why);
	ibc_error("launch: rank %d on %s: PMI protocol error: %s", p->rank, host_of(a, p->rank), why);
	ibc_launch_fail(a, p->rank, 1, "rank %d on %s broke the PMI protocol: %s", p->rank,
			host_of(a, p->rank), why);
}

/* --------------------------------------------------------- collectives --- */

static struct ibc_launch_coll *coll_find(struct ibc_launch_agent *a, uint32_t seq, int create)
{
	struct ibc_launch_coll *c;

	for (c = a->colls; c; c = c->next)
		if (c->seq == seq)
			return c;
	if (!create)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->seq = seq;
	c->op = -1;
	c->next = a->colls;
	a->colls = c;
	return c;
}

static void coll_free(struct ibc_launch_agent *a, struct ibc_launch_coll *c)
{
	struct ibc_launch_coll **pp = &a->colls;

	while (*pp != c)
		pp = &(*pp)->next;
	*pp = c->next;
	ibc_launch_buf_free(&c->ent);
	ibc_launch_buf_free(&c->kv);
	free(c);
}

static int coll_expect(const struct ibc_launch_agent *a)
{
	return a->me == 0 ? (int)a->job.np : a->subtree_ranks;
}

static void coll_down(struct ibc_launch_agent *a, struct ibc_launch_coll *c, const void *p, size_t n);

/* Root: every contribution is in; compute and distribute the result. */

/* The n "key, value" pairs of a fence's aggregate into this NLA's cache:
 * at the root, and for HCMA* on the way up at every level ("after
 * populating the local cache", thesis ch. 3), so a get from the subtree
 * is answered here. */
static void kv_cache(struct ibc_launch_agent *a, const void *p, size_t len, uint32_t n)
{
	struct ibc_launch_rd kr;
	uint32_t i;

	ibc_launch_rd_init(&kr, p, len);
	for (i = 0; i < n && !kr.err; i++) {
		char *key = ibc_launch_rd_strdup(&kr);
		size_t vl;
		const void *v = ibc_launch_rd_bytes(&kr, &vl);

		if (key != NULL && v != NULL)
			ibc_launch_cache_put(&a->cache, key, v, vl);
		free(key);
	}
}

static void coll_finish_root(struct ibc_launch_agent *a, struct ibc_launch_coll *c)
{
	int np = (int)a->job.np, r, ok = 1;
	const unsigned char **data = calloc((size_t)np, sizeof(*data));
	size_t *len = calloc((size_t)np, sizeof(*len));
	struct ibc_launch_rd rd;
	struct ibc_launch_buf down = { 0 };
	uint32_t i;
	size_t blk = 0;
	char why[200] = "";

	if (data == NULL || len == NULL) {
		ibc_launch_fail(a, -1, 1, "launcher out of memory");
		goto out_free;
	}
	ibc_launch_rd_init(&rd, ibc_launch_buf_head(&c->ent), ibc_launch_buf_avail(&c->ent));
	for (i = 0; i < c->nent; i++) {
		uint32_t rk = ibc_launch_rd_u32(&rd);
		size_t l;
		const void *d = ibc_launch_rd_bytes(&rd, &l);

		if (rd.err || rk >= (uint32_t)np || data[rk] != NULL) {
			ok = 0;
			snprintf(why, sizeof(why), "duplicate or bad contribution");
			break;
		}
		data[rk] = d ? d : (const unsigned char *)"";
		len[rk] = l;
	}
	if (ok && c->nent != (uint32_t)np) {
		ok = 0;
		snprintf(why, sizeof(why), "%u of %d contributions", c->nent, np);
	}
	if (ok && (c->root < 0 || c->root >= np)) {
		ok = 0;
		snprintf(why, sizeof(why), "root %d out of range", c->root);
	}
	if (ok) {
		switch (c->op) {
		case IBC_LAUNCH_COLL_GATHER:
		case IBC_LAUNCH_COLL_ALLGATHER:
			for (r = 1; r < np && ok; r++)
				if (len[r] != len[0]) {
					ok = 0;
					snprintf(why, sizeof(why), "rank %d gives %zu bytes, rank 0 %zu", r, len[r], len[0]);
				}
			break;
		case IBC_LAUNCH_COLL_SCATTER:
			if (len[c->root] % (size_t)np != 0) {
				ok = 0;
				snprintf(why, sizeof(why), "scatter root gives %zu bytes, not a multiple of %d",
					 len[c->root], np);
			}
			blk = len[c->root] / (size_t)np;
			break;
		case IBC_LAUNCH_COLL_ALLTOALL:
			for (r = 0; r < np && ok; r++)
				if (len[r] != len[0] || len[r] % (size_t)np != 0) {
					ok = 0;
					snprintf(why, sizeof(why), "alltoall: rank %d gives %zu bytes", r, len[r]);
				}
			blk = len[0] / (size_t)np;
			break;
		default:
			break;
		}
	}
	if (!ok) {
		ibc_error("launch: collective %u (%s): %s", c->seq, ibc_launch_coll_name(c->op), why);
		ibc_launch_fail(a, -1, 1, "collective %s: %s", ibc_launch_coll_name(c->op), why);
		goto out_free;
	}
	switch (c->op) {
	case IBC_LAUNCH_COLL_GATHER:
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, (uint32_t)c->root);
		ibc_launch_buf_put_u32(&down, (uint32_t)(len[0] * (size_t)np));
		for (r = 0; r < np; r++)
			ibc_launch_buf_append(&down, data[r], len[r]);
		break;
	case IBC_LAUNCH_COLL_ALLGATHER:
		ibc_launch_buf_put_u32(&down, 0);
		ibc_launch_buf_put_u32(&down, (uint32_t)(len[0] * (size_t)np));
		for (r = 0; r < np; r++)
			ibc_launch_buf_append(&down, data[r], len[r]);
		break;
	case IBC_LAUNCH_COLL_BCAST:
		ibc_launch_buf_put_u32(&down, 0);
		ibc_launch_buf_put_bytes(&down, data[c->root], len[c->root]);
		break;
	case IBC_LAUNCH_COLL_SCATTER:
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, (uint32_t)np);
		for (r = 0; r < np; r++) {
			ibc_launch_buf_put_u32(&down, (uint32_t)r);
			ibc_launch_buf_put_bytes(&down, data[c->root] + (size_t)r * blk, blk);
		}
		break;
	case IBC_LAUNCH_COLL_ALLTOALL:
		ibc_launch_buf_put_u32(&down, 1);
		ibc_launch_buf_put_u32(&down, (uint32_t)np);
		for (r = 0; r < np; r++) {
			int s;

			ibc_launch_buf_put_u32(&down, (uint32_t)r);
			ibc_launch_buf_put_u32(&down, (uint32_t)(blk * (size_t)np));
			for (s = 0; s < np; s++)
				ibc_launch_buf_append(&down, data[s] + (size_t)r * blk, blk);
		}
		break;
	default: /* barrier, fence */
		ibc_launch_buf_put_u32(&down, 0);
		ibc_launch_buf_put_u32(&down, 0);
		break;
	}
	/* the fence publishes: the root keeps every pair; HCMAB* broadcast them */
	{
		uint32_t nkv_out = 0;
		int bc = a->job.cache >= IBC_LAUNCH_CACHE_HCMAB && !a->flat;

		kv_cache(a, ibc_launch_buf_head(&c->kv), ibc_launch_buf_avail(&c->kv), c->nkv);
		nkv_out = bc ? c->nkv : 0;
		ibc_launch_buf_put_u32(&down, nkv_out);
		if (nkv_out > 0)
			ibc_launch_buf_append(&down, ibc_launch_buf_head(&c->kv), ibc_launch_buf_avail(&c->kv));
	}
	if (down.err) {
		ibc_launch_fail(a, -1, 1, "launcher out of memory");
		goto out_down;
	}
	coll_down(a, c, ibc_launch_buf_head(&down), ibc_launch_buf_avail(&down));
out_down:
	ibc_launch_buf_free(&down);
out_free:
	free(data);
	free(len);
}

static void coll_check(struct ibc_launch_agent *a, struct ibc_launch_coll *c)
{
	struct ibc_launch_buf up = { 0 };

	if (c->sent || c->have < coll_expect(a))
		return;
	if (c->op == IBC_LAUNCH_COLL_FENCE && a->nkvpend > 0) {
		ibc_launch_buf_append(&c->kv, ibc_launch_buf_head(&a->kvpend), ibc_launch_buf_avail(&a->kvpend));
		c->nkv += a->nkvpend;
		ibc_launch_buf_free(&a->kvpend);
		a->nkvpend = 0;
	}
	if (a->me == 0) {
		c->sent = 1;
		coll_finish_root(a, c);
		return;
	}
	ibc_launch_buf_put_u32(&up, (uint32_t)c->op);
	ibc_launch_buf_put_u32(&up, (uint32_t)c->root);
	ibc_launch_buf_put_u32(&up, c->nent);
	ibc_launch_buf_append(&up, ibc_launch_buf_head(&c->ent), ibc_launch_buf_avail(&c->ent));
	ibc_launch_buf_put_u32(&up, c->nkv);
	ibc_launch_buf_append(&up, ibc_launch_buf_head(&c->kv), ibc_launch_buf_avail(&c->kv));
	send_up(a, IBC_LAUNCH_MSG_COLL_UP, (uint32_t)a->me, 0, c->seq, 0, ibc_launch_buf_head(&up),
		ibc_launch_buf_avail(&up));
	ibc_launch_buf_free(&up);
	ibc_launch_buf_free(&c->ent);
	ibc_launch_buf_free(&c->kv);
	c->sent = 1;
}

static int coll_join(struct ibc_launch_agent *a, struct ibc_launch_coll *c, int op, int root, const char *who)
{
	if (c->op == -1) {
		c->op = op;
		c->root = root;
		return IBC_OK;
	}
	if (c->op != op || c->root != root) {
		ibc_error("launch: collective %u: %s calls %s(root %d) but others %s(root %d)", c->seq, who,
			  ibc_launch_coll_name(op), root, ibc_launch_coll_name(c->op), c->root);
		ibc_launch_fail(a, -1, 1, "collective mismatch: %s calls %s, others %s", who,
				ibc_launch_coll_name(op), ibc_launch_coll_name(c->op));
		return IBC_ERR_PROTO;
	}
	return IBC_OK;
}

static void proc_coll(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int op, int root,
		      const void *data, size_t len, int wait)
{
	struct ibc_launch_coll *c = coll_find(a, p->coll_seq, 1);
	char who[64];

	snprintf(who, sizeof(who), "rank %d", p->rank);
	if (c == NULL || coll_join(a, c, op, root, who) != IBC_OK)
		return;
	p->wait = wait;
	p->wait_seq = p->coll_seq++;
	ibc_launch_buf_put_u32(&c->ent, (uint32_t)p->rank);
	ibc_launch_buf_put_bytes(&c->ent, data, len);
	c->nent++;
	c->have++;
	coll_check(a, c);
}

static void proc_coll_result(struct ibc_launch_proc *p, const void *d, size_t n)
{
	if (p->wait == WAIT_BARRIER)
		proc_replyf(p, NULL, 0, "cmd=barrier_out rc=0");
	else
		proc_replyf(p, d, n, "cmd=ibc_coll_result rc=0 bytes=%zu", n);
	p->wait = WAIT_NONE;
}

/* The result of collective c arrived (or was computed at the root). */
static void coll_down(struct ibc_launch_agent *a, struct ibc_launch_coll *c, const void *pl, size_t n)
{
	struct ibc_launch_rd rd;
	uint32_t mode, i, cnt = 0, nkv;
	const unsigned char *common = NULL;
	size_t clen = 0, kvoff;
	int j;
	struct ibc_launch_buf *sub = NULL;
	uint32_t *subn = NULL;

	ibc_launch_rd_init(&rd, pl, n);
	mode = ibc_launch_rd_u32(&rd);
	if (mode == 0) {
		common = ibc_launch_rd_bytes(&rd, &clen);
		for (j = 0; j < a->nproc; j++) {
			struct ibc_launch_proc *p = &a->proc[j];

			if (p->wait != WAIT_NONE && p->wait_seq == c->seq)
				proc_coll_result(p, common, clen);
		}
	} else {
		sub = calloc((size_t)a->nchild + 1, sizeof(*sub));
		subn = calloc((size_t)a->nchild + 1, sizeof(*subn));
		cnt = ibc_launch_rd_u32(&rd);
		for (i = 0; i < cnt && !rd.err; i++) {
			int rk = (int)ibc_launch_rd_u32(&rd), ch = -1;
			size_t l;
			const void *d = ibc_launch_rd_bytes(&rd, &l);

			if (rd.err)
				break;
			switch (route(a, rk, &ch)) {
			case 0: {
				struct ibc_launch_proc *p = a->flat ? &a->proc[rk] : local_proc(a, rk);

				if (p != NULL && p->wait != WAIT_NONE && p->wait_seq == c->seq)
					proc_coll_result(p, d, l);
				break;
			}
			case 1:
				if (sub != NULL && ch >= 0 && ch < a->nchild) {
					ibc_launch_buf_put_u32(&sub[ch], (uint32_t)rk);
					ibc_launch_buf_put_bytes(&sub[ch], d, l);
					subn[ch]++;
				}
				break;
			default:
				break;
			}
		}
		/* ranks without an entry (gather non-roots) get an empty result */
		for (j = 0; j < a->nproc; j++) {
			struct ibc_launch_proc *p = &a->proc[j];

			if (p->wait != WAIT_NONE && p->wait_seq == c->seq)
				proc_coll_result(p, NULL, 0);
		}
	}
	nkv = ibc_launch_rd_u32(&rd);
	kvoff = rd.pos;
	if (rd.err) {
		ibc_launch_fail(a, -1, 1, "malformed COLL_DOWN on node agent %d", a->me);
		goto out_free;
	}
	if (nkv > 0 && a->me != 0) {
		for (i = 0; i < nkv; i++) {
			char *key = ibc_launch_rd_strdup(&rd);
			size_t vl;
			const void *v = ibc_launch_rd_bytes(&rd, &vl);

			if (key != NULL && v != NULL)
				ibc_launch_cache_put(&a->cache, key, v, vl);
			free(key);
		}
	}
	for (j = 0; j < a->nchild; j++) {
		struct ibc_launch_buf b = { 0 };

		if (a->child[j].fd < 0)
			continue;
		if (mode == 0) {
			ibc_launch_buf_put_u32(&b, 0);
			ibc_launch_buf_put_bytes(&b, common, clen);
		} else {
			ibc_launch_buf_put_u32(&b, 1);
			ibc_launch_buf_put_u32(&b, subn ? subn[j] : 0);
			if (sub)
				ibc_launch_buf_append(&b, ibc_launch_buf_head(&sub[j]), ibc_launch_buf_avail(&sub[j]));
		}
		ibc_launch_buf_put_u32(&b, nkv);
		ibc_launch_buf_append(&b, (const unsigned char *)pl + kvoff, n - kvoff);
		link_send(a, &a->child[j], IBC_LAUNCH_MSG_COLL_DOWN, 0, 0, c->seq, 0, ibc_launch_buf_head(&b),
			  ibc_launch_buf_avail(&b));
		ibc_launch_buf_free(&b);
	}
out_free:
	if (sub)
		for (j = 0; j <= a->nchild; j++)
			ibc_launch_buf_free(&sub[j]);
	free(sub);
	free(subn);
	coll_free(a, c);
}

static void on_coll_up(struct ibc_launch_agent *a, struct ibc_launch_conn *from, const struct ibc_launch_hdr *h,
		       const unsigned char *pl)
{
	struct ibc_launch_rd rd;
	uint32_t op, root, nent, nkv;
	size_t start, end;
	struct ibc_launch_coll *c;
	char who[64];

	ibc_launch_rd_init(&rd, pl, h->len);
	op = ibc_launch_rd_u32(&rd);
	root = ibc_launch_rd_u32(&rd);
	nent = ibc_launch_rd_u32(&rd);
	start = rd.pos;
	for (uint32_t i = 0; i < nent && !rd.err; i++) {
		size_t l;

		ibc_launch_rd_u32(&rd);
		ibc_launch_rd_bytes(&rd, &l);
	}
	end = rd.pos;
	nkv = ibc_launch_rd_u32(&rd);
	if (rd.err || op >= IBC_LAUNCH_COLL_MAX_) {
		ibc_launch_fail(a, -1, 1, "malformed COLL_UP from node agent %d", from->idx);
		return;
	}
	c = coll_find(a, h->seq, 1);
	snprintf(who, sizeof(who), "node agent %d", from->idx);
	if (c == NULL || coll_join(a, c, (int)op, (int)root, who) != IBC_OK)
		return;
	ibc_launch_buf_append(&c->ent, pl + start, end - start);
	c->nent += nent;
	c->have += (int)nent;
	ibc_launch_buf_append(&c->kv, pl + rd.pos, h->len - rd.pos);
	c->nkv += nkv;
	if (nkv > 0 && a->me != 0 && a->job.cache != IBC_LAUNCH_CACHE_HCS)
		kv_cache(a, pl + rd.pos, h->len - rd.pos, nkv);
	coll_check(a, c);
}

/* ------------------------------------------------------ bulletin board --- */

static void get_reply(struct ibc_launch_agent *a, struct ibc_launch_proc *p, const char *key, const void *v,
		      size_t len)
{
	(void)a;
	if (p->wait == WAIT_PMIGET) {
		if (v != NULL)
			proc_replyf(p, NULL, 0, "cmd=get_result rc=0 msg=success value=%.*s", (int)len,
				    (const char *)v);
		else
			proc_replyf(p, NULL, 0, "cmd=get_result rc=-1 msg=key_%s_not_found", key);
	} else if (v != NULL) {
		proc_replyf(p, v, len, "cmd=ibc_get_result rc=0 bytes=%zu", len);
	} else {
		proc_replyf(p, NULL, 0, "cmd=ibc_get_result rc=-1 bytes=0");
	}
	p->wait = WAIT_NONE;
}

static void child_get_reply(struct ibc_launch_agent *a, int ch, const char *key, const void *v, size_t len)
{
	struct ibc_launch_buf b = { 0 };

	ibc_launch_buf_put_str(&b, key);
	ibc_launch_buf_put_bytes(&b, v, v ? len : 0);
	link_send(a, &a->child[ch], IBC_LAUNCH_MSG_GET_RESP, 0, 0, 0, v != NULL, ibc_launch_buf_head(&b),
		  ibc_launch_buf_avail(&b));
	ibc_launch_buf_free(&b);
}

/* A get from a local process (proc >= 0) or a child link (child >= 0). */
static void bb_get(struct ibc_launch_agent *a, const char *key, int proc, int child)
{
	size_t len = 0;
	const void *v = ibc_launch_cache_get(&a->cache, key, &len);
	struct ibc_launch_getwait *w, *x;
	int asked = 0;

	a->ctr.gets++;
	if (v != NULL || a->me == 0) {
		if (v != NULL)
			a->ctr.hits++;
		else
			a->ctr.misses++;
		if (proc >= 0)
			get_reply(a, &a->proc[proc], key, v, len);
		else
			child_get_reply(a, child, key, v, len);
		return;
	}
	a->ctr.misses++;
	for (x = a->gets; x; x = x->next)
		if (strcmp(x->key, key) == 0)
			asked = 1;
	w = calloc(1, sizeof(*w));
	if (w == NULL || (w->key = strdup(key)) == NULL) {
		free(w);
		ibc_launch_fail(a, -1, 1, "node agent out of memory");
		return;
	}
	w->proc = proc;
	w->child = child;
	w->next = a->gets;
	a->gets = w;
	if (!asked) {
		struct ibc_launch_buf b = { 0 };

		ibc_launch_buf_put_str(&b, key);
		send_up(a, IBC_LAUNCH_MSG_GET_REQ, 0, 0, 0, 0, ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b));
		ibc_launch_buf_free(&b);
	}
}

static void on_get_resp(struct ibc_launch_agent *a, const struct ibc_launch_hdr *h, const unsigned char *pl)
{
	struct ibc_launch_rd rd;
	char *key;
	size_t vl;
	const void *v;
	struct ibc_launch_getwait **pp = &a->gets;

	ibc_launch_rd_init(&rd, pl, h->len);
	key = ibc_launch_rd_strdup(&rd);
	v = ibc_launch_rd_bytes(&rd, &vl);
	if (key == NULL || rd.err) {
		free(key);
		ibc_launch_fail(a, -1, 1, "malformed GET_RESP at node agent %d", a->me);
		return;
	}
	if (!h->aux)
		v = NULL;
	if (v != NULL)
		ibc_launch_cache_put(&a->cache, key, v, vl);
	while (*pp) {
		struct ibc_launch_getwait *w = *pp;

		if (strcmp(w->key, key) == 0) {
			*pp = w->next;
			if (w->proc >= 0)
				get_reply(a, &a->proc[w->proc], key, v, vl);
			else
				child_get_reply(a, w->child, key, v, vl);
			free(w->key);
			free(w);
		} else {
			pp = &w->next;
		}
	}
	free(key);
}

/* A put from a local process. */
static void bb_put(struct ibc_launch_agent *a, const char *key, const void *v, size_t len)
{
	a->ctr.puts++;
	ibc_launch_cache_put(&a->cache, key, v, len);
	if (a->me == 0)
		return;
	if (a->job.cache == IBC_LAUNCH_CACHE_HCS) {
		struct ibc_launch_buf b = { 0 };

		ibc_launch_buf_put_str(&b, key);
		ibc_launch_buf_put_bytes(&b, v, len);
		send_up(a, IBC_LAUNCH_MSG_PUT, 0, 0, 0, 0, ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b));
		ibc_launch_buf_free(&b);
	} else {
		ibc_launch_buf_put_str(&a->kvpend, key);
		ibc_launch_buf_put_bytes(&a->kvpend, v, len);
		a->nkvpend++;
	}
}

static void on_put(struct ibc_launch_agent *a, const struct ibc_launch_hdr *h, const unsigned char *pl)
{
	struct ibc_launch_rd rd;
	char *key;
	size_t vl;
	const void *v;

	ibc_launch_rd_init(&rd, pl, h->len);
	key = ibc_launch_rd_strdup(&rd);
	v = ibc_launch_rd_bytes(&rd, &vl);
	if (key == NULL || v == NULL) {
		free(key);
		ibc_launch_fail(a, -1, 1, "malformed PUT at node agent %d", a->me);
		return;
	}
	ibc_launch_cache_put(&a->cache, key, v, vl);
	if (a->me != 0)
		send_up(a, IBC_LAUNCH_MSG_PUT, 0, 0, 0, 0, pl, h->len);
	free(key);
}

/* ------------------------------------------------------ point to point --- */

static int msg_match(const struct ibc_launch_msgq *m, int src, int tag)
{
	return (src < 0 || m->src == src) && (tag < 0 || m->tag == tag);
}

static void proc_try_recv(struct ibc_launch_proc *p)
{
	struct ibc_launch_msgq **pp = &p->mbox, *prev = NULL;

	if (p->wait != WAIT_RECV)
		return;
	for (; *pp; prev = *pp, pp = &(*pp)->next) {
		struct ibc_launch_msgq *m = *pp;

		if (!msg_match(m, p->recv_src, p->recv_tag))
			continue;
		*pp = m->next;
		if (p->mbox_tail == m)
			p->mbox_tail = prev;
		proc_replyf(p, m->data, m->len, "cmd=ibc_recv_result rc=0 src=%d tag=%d bytes=%zu", m->src,
			    m->tag, m->len);
		free(m);
		p->wait = WAIT_NONE;
		return;
	}
}

static void p2p_deliver(struct ibc_launch_agent *a, int src, int dst, int tag, const void *d, size_t len)
{
	int ch = -1;

	switch (route(a, dst, &ch)) {
	case 0: {
		struct ibc_launch_proc *p = a->flat ? &a->proc[dst] : local_proc(a, dst);
		struct ibc_launch_msgq *m = malloc(sizeof(*m) + len);

		if (p == NULL || m == NULL) {
			free(m);
			return;
		}
		m->next = NULL;
		m->src = src;
		m->tag = tag;
		m->len = len;
		memcpy(m->data, d, len);
		if (p->mbox_tail)
			p->mbox_tail->next = m;
		else
			p->mbox = m;
		p->mbox_tail = m;
		proc_try_recv(p);
		break;
	}
	case 1:
		link_send(a, &a->child[ch], IBC_LAUNCH_MSG_P2P, (uint32_t)src, (uint32_t)dst, (uint32_t)tag, 0, d, len);
		break;
	default:
		send_up(a, IBC_LAUNCH_MSG_P2P, (uint32_t)src, (uint32_t)dst, (uint32_t)tag, 0, d, len);
		break;
	}
}

/* ---------------------------------------------------- process protocol --- */

static void pmi_mapping(const struct ibc_launch_agent *a, char *buf, size_t n)
{
	size_t off;
	uint32_t j = 0;

	off = (size_t)snprintf(buf, n, "(vector");
	while (j < a->job.nnodes && off < n) {
		int cnt = a->job.start[j + 1] - a->job.start[j];
		uint32_t e = j + 1;

		while (e < a->job.nnodes && a->job.start[e + 1] - a->job.start[e] == cnt)
			e++;
		off += (size_t)snprintf(buf + off, n - off, ",(%u,%u,%d)", j, e - j, cnt);
		j = e;
	}
	if (off < n)
		snprintf(buf + off, n - off, ")");
}

/* Handles one command; returns bytes consumed from p->in, 0 when more input
 * is needed, -1 after a protocol error. */
static long proc_command(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	const char *head = (const char *)ibc_launch_buf_head(&p->in);
	size_t avail = ibc_launch_buf_avail(&p->in), ll;
	const char *nl = memchr(head, '\n', avail);
	char line[IBC_LAUNCH_LINE_MAX], resp[64];
	struct ibc_launch_kv kv[IBC_LAUNCH_KV_MAX];
	const char *cmd, *s;
	long long bytes = 0;
	int n, idx = (int)(p - a->proc);
	const unsigned char *payload;

	if (nl == NULL) {
		if (avail >= IBC_LAUNCH_LINE_MAX) {
			proc_proto_error(a, p, "error", "line_too_long");
			return -1;
		}
		return 0;
	}
	ll = (size_t)(nl - head);
	if (ll >= IBC_LAUNCH_LINE_MAX) {
		proc_proto_error(a, p, "error", "line_too_long");
		return -1;
	}
	memcpy(line, head, ll);
	line[ll] = '\0';
	n = ibc_launch_kv_parse(line, kv, IBC_LAUNCH_KV_MAX);
	if (n < 0) {
		proc_proto_error(a, p, "error", "malformed_command");
		return -1;
	}
	cmd = kv[0].val;
	snprintf(resp, sizeof(resp), "%s_result", cmd);
	if (strncmp(cmd, "ibc_", 4) == 0 && ibc_launch_kv_find(kv, n, "bytes") != NULL) {
		if (ibc_launch_kv_long(kv, n, "bytes", &bytes) != IBC_OK || bytes < 0 ||
		    bytes > (long long)IBC_LAUNCH_WIRE_MAX / 2) {
			proc_proto_error(a, p, resp, "bad_bytes");
			return -1;
		}
		if (avail < ll + 1 + (size_t)bytes)
			return 0;
	}
	payload = (const unsigned char *)head + ll + 1;
	ibc_debug("launch: rank %d: %s", p->rank, cmd);
	if (strcmp(kv[0].key, "mcmd") == 0) {
		proc_proto_error(a, p, "error", "spawn_not_supported");
		return -1;
	}
	if (!p->inited && strcmp(cmd, "init") != 0 && strcmp(cmd, "initack") != 0) {
		proc_proto_error(a, p, resp, "command_before_init");
		return -1;
	}
	if (p->finalized) {
		proc_proto_error(a, p, resp, "command_after_finalize");
		return -1;
	}
	if (strcmp(cmd, "init") == 0) {
		if (p->inited) {
			proc_proto_error(a, p, "response_to_init", "init_twice");
			return -1;
		}
		p->inited = 1;
		proc_replyf(p, NULL, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
	} else if (strcmp(cmd, "initack") == 0) {
		p->inited = 1;
		proc_replyf(p, NULL, 0, "cmd=initack rc=0\ncmd=set size=%u\ncmd=set rank=%d\ncmd=set debug=0",
			    a->job.np, p->rank);
	} else if (strcmp(cmd, "get_maxes") == 0) {
		proc_replyf(p, NULL, 0, "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024");
	} else if (strcmp(cmd, "get_appnum") == 0) {
		proc_replyf(p, NULL, 0, "cmd=appnum rc=0 appnum=0");
	} else if (strcmp(cmd, "get_my_kvsname") == 0) {
		proc_replyf(p, NULL, 0, "cmd=my_kvsname rc=0 kvsname=ibc_kvs_%u", a->job.jobid);
	} else if (strcmp(cmd, "get_universe_size") == 0) {
		proc_replyf(p, NULL, 0, "cmd=universe_size rc=0 size=%u", a->job.np);
	} else if (strcmp(cmd, "barrier_in") == 0) {
		proc_coll(a, p, IBC_LAUNCH_COLL_FENCE, 0, NULL, 0, WAIT_BARRIER);
	} else if (strcmp(cmd, "put") == 0) {
		const char *key = ibc_launch_kv_find(kv, n, "key"), *val = ibc_launch_kv_find(kv, n, "value");

		if (key == NULL || val == NULL || *key == '\0' || strlen(key) > 256 || strlen(val) > 1024) {
			proc_proto_error(a, p, "put_result", "bad_put");
			return -1;
		}
		bb_put(a, key, val, strlen(val));
		proc_replyf(p, NULL, 0, "cmd=put_result rc=0 msg=success");
	} else if (strcmp(cmd, "get") == 0) {
		const char *key = ibc_launch_kv_find(kv, n, "key");
		char map[1024];

		if (key == NULL || *key == '\0') {
			proc_proto_error(a, p, "get_result", "bad_get");
			return -1;
		}
		if (strcmp(key, "PMI_process_mapping") == 0) {
			pmi_mapping(a, map, sizeof(map));
			proc_replyf(p, NULL, 0, "cmd=get_result rc=0 msg=success value=%s", map);
		} else {
			p->wait = WAIT_PMIGET;
			bb_get(a, key, idx, -1);
		}
	} else if (strcmp(cmd, "finalize") == 0) {
		p->finalized = 1;
		proc_replyf(p, NULL, 0, "cmd=finalize_ack rc=0");
	} else if (strcmp(cmd, "abort") == 0) {
		long long code = 1;

		s = ibc_launch_kv_find(kv, n, "msg");
		if (ibc_launch_kv_long(kv, n, "exitcode", &code) != IBC_OK)
			code = 1;
		ibc_launch_fail(a, p->rank, (int)(code & 255), "rank %d on %s called abort (exit code %lld)%s%s",
				p->rank, host_of(a, p->rank), code, s && *s ? ": " : "", s ? s : "");
	} else if (strcmp(cmd, "ibc_coll") == 0) {
		long long root = 0;
		int op = ibc_launch_coll_find(ibc_launch_kv_find(kv, n, "op") ? ibc_launch_kv_find(kv, n, "op") : "");

		if (op < 0 || ibc_launch_kv_long(kv, n, "root", &root) != IBC_OK || root >= a->job.np) {
			proc_proto_error(a, p, resp, "bad_collective");
			return -1;
		}
		proc_coll(a, p, op, (int)root, payload, (size_t)bytes, WAIT_COLL);
	} else if (strcmp(cmd, "ibc_send") == 0) {
		long long dst = 0, tag = 0;

		if (ibc_launch_kv_long(kv, n, "dest", &dst) != IBC_OK || dst < 0 || dst >= a->job.np ||
		    ibc_launch_kv_long(kv, n, "tag", &tag) != IBC_OK || tag < 0) {
			proc_proto_error(a, p, resp, "bad_send");
			return -1;
		}
		p2p_deliver(a, p->rank, (int)dst, (int)tag, payload, (size_t)bytes);
		proc_replyf(p, NULL, 0, "cmd=ibc_send_result rc=0");
	} else if (strcmp(cmd, "ibc_recv") == 0) {
		long long src = -1, tag = -1;

		if (ibc_launch_kv_long(kv, n, "src", &src) != IBC_OK || src >= a->job.np ||
		    ibc_launch_kv_long(kv, n, "tag", &tag) != IBC_OK) {
			proc_proto_error(a, p, resp, "bad_recv");
			return -1;
		}
		p->wait = WAIT_RECV;
		p->recv_src = (int)src;
		p->recv_tag = (int)tag;
		proc_try_recv(p);
	} else if (strcmp(cmd, "ibc_put") == 0) {
		s = ibc_launch_kv_find(kv, n, "key");
		if (s == NULL || *s == '\0' || strlen(s) > 255) {
			proc_proto_error(a, p, resp, "bad_key");
			return -1;
		}
		bb_put(a, s, payload, (size_t)bytes);
		proc_replyf(p, NULL, 0, "cmd=ibc_put_result rc=0");
	} else if (strcmp(cmd, "ibc_get") == 0) {
		s = ibc_launch_kv_find(kv, n, "key");
		if (s == NULL || *s == '\0') {
			proc_proto_error(a, p, resp, "bad_key");
			return -1;
		}
		p->wait = WAIT_GET;
		bb_get(a, s, idx, -1);
	} else {
		proc_proto_error(a, p, resp, "unknown_command");
		return -1;
	}
	return (long)(ll + 1 + (size_t)bytes);
}

static void proc_input(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	while (p->wait == WAIT_NONE && ibc_launch_buf_avail(&p->in) > 0 && !a->terminating) {
		long used = proc_command(a, p);

		if (used <= 0) {
			if (used < 0) {
				ibc_launch_buf_free(&p->in);
			}
			return;
		}
		ibc_launch_buf_consume(&p->in, (size_t)used);
	}
}

/* -------------------------------------------------------------- output --- */

static void output_emit(struct ibc_launch_agent *a, int rank, int stream, const void *d, size_t n)
{
	if (a->me != 0) {
		send_up(a, IBC_LAUNCH_MSG_OUTPUT, (uint32_t)rank, 0, 0, (uint32_t)stream, d, n);
		return;
	}
	{
		struct ibc_launch_buf b = { 0 };
		char tag[32];
		const unsigned char *c;
		size_t off;
		int fd = stream == 2 ? 2 : 1;

		if (a->job.tag_output) {
			snprintf(tag, sizeof(tag), "[%d] ", rank);
			ibc_launch_buf_append(&b, tag, strlen(tag));
		}
		ibc_launch_buf_append(&b, d, n);
		ibc_launch_buf_append(&b, "\n", 1);
		c = ibc_launch_buf_head(&b);
		for (off = 0; off < ibc_launch_buf_avail(&b);) {
			ssize_t w = write(fd, c + off, ibc_launch_buf_avail(&b) - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		ibc_launch_buf_free(&b);
	}
}

static void output_lines(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int s, int eof)
{
	struct ibc_launch_buf *lb = &p->line[s];

	for (;;) {
		const unsigned char *h = ibc_launch_buf_head(lb);
		size_t av = ibc_launch_buf_avail(lb);
		const unsigned char *nl = av ? memchr(h, '\n', av) : NULL;

		if (nl != NULL) {
			output_emit(a, p->rank, s + 1, h, (size_t)(nl - h));
			ibc_launch_buf_consume(lb, (size_t)(nl - h) + 1);
			continue;
		}
		if (av > 0 && (eof || av >= 65536)) {
			output_emit(a, p->rank, s + 1, h, av);
			ibc_launch_buf_consume(lb, av);
		}
		break;
	}
}

static void proc_read_output(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int s)
{
	char buf[16384];
	ssize_t r = read(p->ofd[s], buf, sizeof(buf));

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		output_lines(a, p, s, 1);
		close(p->ofd[s]);
		p->ofd[s] = -1;
		return;
	}
	ibc_launch_buf_append(&p->line[s], buf, (size_t)r);
	output_lines(a, p, s, 0);
}

/* ------------------------------------------------------------- spawning --- */

static char *shell_quote(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *q = malloc(4 * n + 3);

	if (q == NULL)
		return NULL;
	q[o++] = '\'';
	for (i = 0; i < n; i++) {
		if (s[i] == '\'') {
			memcpy(q + o, "'\\''", 4);
			o += 4;
		} else {
			q[o++] = s[i];
		}
	}
	q[o++] = '\'';
	q[o] = '\0';
	return q;
}

static char *subst_host(const char *word, const char *host)
{
	const char *at = strstr(word, "{host}");
	char *r;

	if (at == NULL)
		return strdup(word);
	r = malloc(strlen(word) + strlen(host) + 1);
	if (r == NULL)
		return NULL;
	memcpy(r, word, (size_t)(at - word));
	strcpy(r + (at - word), host);
	strcat(r, at + 6);
	return r;
}

int ibc_launch_rsh_argv(const char *rsh, const char *host, char *const *cmd, char ***out)
{
	size_t ncmd = 0, n = 0, cap;
	char **v;

	while (cmd[ncmd])
		ncmd++;
	cap = ncmd + 64;
	v = calloc(cap, sizeof(*v));
	if (v == NULL)
		return IBC_ERR_NOMEM;
	if (strcmp(rsh, "local") == 0) {
		/* nothing in front */
	} else if (strcmp(rsh, "ssh") == 0) {
		size_t len = 1, i;
		char *joined;

		v[n++] = strdup("ssh");
		v[n++] = strdup("-o");
		v[n++] = strdup("BatchMode=yes");
		v[n++] = strdup("-x");
		v[n++] = strdup(host);
		for (i = 0; i < ncmd; i++)
			len += 4 * strlen(cmd[i]) + 3;
		joined = malloc(len + 64);
		if (joined == NULL)
			goto err_free_v;
		joined[0] = '\0';
		for (i = 0; i < ncmd; i++) {
			char *q = shell_quote(cmd[i]);

			if (q == NULL) {
				free(joined);
				goto err_free_v;
			}
			if (i > 0)
				strcat(joined, " ");
			strcat(joined, q);
			free(q);
		}
		v[n++] = joined;
		*out = v;
		return IBC_OK;
	} else {
		char *t = strdup(rsh), *save = NULL, *w;

		if (t == NULL)
			goto err_free_v;
		for (w = strtok_r(t, " \t", &save); w && n < 60; w = strtok_r(NULL, " \t", &save))
			v[n++] = subst_host(w, host);
		free(t);
	}
	for (size_t i = 0; i < ncmd; i++)
		v[n++] = strdup(cmd[i]);
	for (size_t i = 0; i < n; i++)
		if (v[i] == NULL)
			goto err_free_v;
	*out = v;
	return IBC_OK;

err_free_v:
	for (size_t i = 0; i < cap; i++)
		free(v[i]);
	free(v);
	return IBC_ERR_NOMEM;
}

static void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void child_unblock_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
}

void ibc_launch_proc_env(const struct ibc_launch_job *j, int rank, int fd)
{
	int node = ibc_launch_rank_node(j->start, (int)j->nnodes, rank);
	int lsize = j->start[node + 1] - j->start[node];
	char v[64];
	int i;

#define SETI(name, val) do { snprintf(v, sizeof(v), "%d", (int)(val)); setenv(name, v, 1); } while (0)
	if (fd >= 0)
		SETI("PMI_FD", fd);
	SETI("PMI_RANK", rank);
	SETI("PMI_SIZE", j->np);
	SETI("IBC_LAUNCH_RANK", rank);
	SETI("IBC_LAUNCH_SIZE", j->np);
	SETI("IBC_LAUNCH_LOCAL_RANK", rank - j->start[node]);
	SETI("IBC_LAUNCH_LOCAL_SIZE", lsize);
	SETI("IBC_LAUNCH_NODE", node);
	SETI("IBC_LAUNCH_NNODES", j->nnodes);
	SETI("IBC_LAUNCH_JOBID", j->jobid);
	SETI("MPI_LOCALRANKID", rank - j->start[node]);
	SETI("MPI_LOCALNRANKS", lsize);
#undef SETI
	setenv("IBC_LAUNCH_HOST", j->hosts[node], 1);
	unsetenv("PMI_PORT");
	unsetenv("PMI_ID");
	for (i = 0; i < j->nenv; i++) {
		char *eq = strchr(j->env[i], '=');

		if (eq != NULL) {
			char *name = strndup(j->env[i], (size_t)(eq - j->env[i]));

			if (name) {
				setenv(name, eq + 1, 1);
				free(name);
			}
		}
	}
}

/* Forks a local process of this node with its PMI socket and pipes. */
static int spawn_local(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	int sv[2], out[2], err[2], in[2], ep[2], e = 0;
	pid_t pid;
	ssize_t r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		ibc_error("launch: pipes for rank %d: %s", p->rank, strerror(errno));
		return IBC_ERR_SYS;
	}
	pid = fork();
	if (pid < 0) {
		ibc_error("launch: fork for rank %d: %s", p->rank, strerror(errno));
		return IBC_ERR_SYS;
	}
	if (pid == 0) {
		child_unblock_signals();
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		fcntl(sv[1], F_SETFD, 0);
		ibc_launch_proc_env(&a->job, p->rank, sv[1]);
		if (chdir(a->job.cwd) != 0) {
			/* keep the agent's directory */
		}
		execvp(a->job.argv[0], a->job.argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0) {
			/* nothing to do */
		}
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no window where kill(-pid) misses */
	close(sv[1]);
	close(out[1]);
	close(err[1]);
	close(in[0]);
	close(ep[1]);
	r = read(ep[0], &e, sizeof(e));
	close(ep[0]);
	p->pid = pid;
	p->sock = sv[0];
	p->ofd[0] = out[0];
	p->ofd[1] = err[0];
	p->infd = in[1];
	ibc_launch_fd_nonblock(p->sock);
	ibc_launch_fd_nonblock(p->ofd[0]);
	ibc_launch_fd_nonblock(p->ofd[1]);
	ibc_launch_fd_nonblock(p->infd);
	if (r == (ssize_t)sizeof(e)) {
		ibc_launch_fail(a, p->rank, 127, "rank %d on %s: cannot execute '%s': %s", p->rank,
				host_of(a, p->rank), a->job.argv[0], strerror(e));
		return IBC_ERR_NOTFOUND;
	}
	return IBC_OK;
}

/* Starts argv through the remote shell for host; stdio: pipes when io != NULL
 * (io[0] stdin write end, io[1] stdout, io[2] stderr read ends), else
 * /dev/null in and inherited out/err. */
static int spawn_rsh(struct ibc_launch_agent *a, const char *host, char **cmd, int *io, pid_t *pid_out)
{
	char **argv = NULL;
	int rc = ibc_launch_rsh_argv(a->job.rsh, host, cmd, &argv), in[2] = { -1, -1 }, out[2] = { -1, -1 },
	    err[2] = { -1, -1 };
	pid_t pid;

	if (rc != IBC_OK)
		return rc;
	if (io != NULL && (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)) {
		ibc_error("launch: pipes: %s", strerror(errno));
		argv_free(argv);
		return IBC_ERR_SYS;
	}
	pid = fork();
	if (pid < 0) {
		ibc_error("launch: fork: %s", strerror(errno));
		argv_free(argv);
		return IBC_ERR_SYS;
	}
	if (pid == 0) {
		child_unblock_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (io != NULL) {
			setpgid(0, 0); /* a process: its group is killed with it */
			dup2(in[0], 0);
			dup2(out[1], 1);
			dup2(err[1], 2);
		} else {
			int nul = open("/dev/null", O_RDONLY);

			if (nul >= 0)
				dup2(nul, 0);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "ibchar-launch: cannot run the remote shell '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	argv_free(argv);
	if (io != NULL) {
		setpgid(pid, pid);
		close(in[0]);
		close(out[1]);
		close(err[1]);
		io[0] = in[1];
		io[1] = out[0];
		io[2] = err[0];
	}
	*pid_out = pid;
	return IBC_OK;
}

/* --------------------------------------------------------- frame input --- */

static void stats_record(struct ibc_launch_agent *a, struct ibc_launch_buf *b)
{
	ibc_launch_buf_put_u32(b, (uint32_t)a->me);
	ibc_launch_buf_put_str(b, a->me == 0 ? "launcher" : a->job.hosts[a->me - 1]);
	ibc_launch_buf_put_u64(b, a->ctr.msgs_sent);
	ibc_launch_buf_put_u64(b, a->ctr.bytes_sent);
	ibc_launch_buf_put_u64(b, a->ctr.msgs_recv);
	ibc_launch_buf_put_u64(b, a->ctr.bytes_recv);
	ibc_launch_buf_put_u64(b, a->ctr.puts);
	ibc_launch_buf_put_u64(b, a->ctr.gets);
	ibc_launch_buf_put_u64(b, a->ctr.hits);
	ibc_launch_buf_put_u64(b, a->ctr.misses);
	ibc_launch_buf_put_u64(b, a->cache.count);
	ibc_launch_buf_put_u64(b, a->cache.mem_hwm);
	ibc_launch_buf_put_u64(b, a->cache.evictions);
}

static void on_frame(struct ibc_launch_agent *a, struct ibc_launch_conn *c, const struct ibc_launch_hdr *h,
		     const unsigned char *pl)
{
	int from_parent = (c == &a->parent), ch = from_parent ? -1 : (int)(c - a->child);

	a->ctr.msgs_recv++;
	a->ctr.bytes_recv += IBC_LAUNCH_WIRE_HDR + h->len;
	switch (h->type) {
	case IBC_LAUNCH_MSG_COLL_UP:
		if (!from_parent)
			on_coll_up(a, c, h, pl);
		break;
	case IBC_LAUNCH_MSG_COLL_DOWN: {
		struct ibc_launch_coll *co = coll_find(a, h->seq, 0);

		if (from_parent && co != NULL)
			coll_down(a, co, pl, h->len);
		else
			ibc_launch_fail(a, -1, 1, "node agent %d: result of unknown collective %u", a->me, h->seq);
		break;
	}
	case IBC_LAUNCH_MSG_P2P:
		if (h->dst >= a->job.np || h->src >= a->job.np) {
			ibc_launch_fail(a, -1, 1, "node agent %d: P2P to bad rank %u", a->me, h->dst);
			break;
		}
		p2p_deliver(a, (int)h->src, (int)h->dst, (int)h->seq, pl, h->len);
		break;
	case IBC_LAUNCH_MSG_PUT:
		on_put(a, h, pl);
		break;
	case IBC_LAUNCH_MSG_GET_REQ: {
		struct ibc_launch_rd rd;
		char *key;

		ibc_launch_rd_init(&rd, pl, h->len);
		key = ibc_launch_rd_strdup(&rd);
		if (key == NULL || ch < 0) {
			ibc_launch_fail(a, -1, 1, "node agent %d: malformed GET_REQ", a->me);
		} else {
			bb_get(a, key, -1, ch);
		}
		free(key);
		break;
	}
	case IBC_LAUNCH_MSG_GET_RESP:
		on_get_resp(a, h, pl);
		break;
	case IBC_LAUNCH_MSG_OUTPUT:
		if (a->me == 0)
			output_emit(a, (int)h->src, (int)h->aux, pl, h->len);
		else
			send_up(a, h->type, h->src, h->dst, h->seq, h->aux, pl, h->len);
		break;
	case IBC_LAUNCH_MSG_STDIN: {
		struct ibc_launch_proc *p = local_proc(a, (int)h->dst);

		if (p == NULL) {
			int cc = -1;

			if (route(a, (int)h->dst, &cc) == 1)
				link_send(a, &a->child[cc], h->type, h->src, h->dst, h->seq, h->aux, pl, h->len);
			break;
		}
		if (h->len == 0)
			p->stdin_eof = 1;
		else
			ibc_launch_buf_append(&p->inq, pl, h->len);
		break;
	}
	case IBC_LAUNCH_MSG_FAIL:
		if (a->me == 0) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%.*s", (int)(h->len < 500 ? h->len : 500), (const char *)pl);
			ibc_launch_fail(a, (int)h->src, (int)h->aux, "%s", msg);
		} else {
			send_up(a, h->type, h->src, h->dst, h->seq, h->aux, pl, h->len);
		}
		break;
	case IBC_LAUNCH_MSG_TERMINATE:
		ibc_launch_terminate(a);
		break;
	case IBC_LAUNCH_MSG_DONE:
		if (ch >= 0) {
			c->done = 1;
			ibc_launch_buf_append(&a->stats, pl, h->len);
			a->nstats += h->aux;
		}
		break;
	default:
		ibc_launch_fail(a, -1, 1, "node agent %d: unexpected %s frame", a->me, ibc_launch_msg_name(h->type));
		break;
	}
}

static const char *conn_host(const struct ibc_launch_agent *a, const struct ibc_launch_conn *c)
{
	if (c->idx <= 0)
		return "the launcher";
	return a->job.hosts[c->idx - 1];
}

static void conn_lost(struct ibc_launch_agent *a, struct ibc_launch_conn *c)
{
	close(c->fd);
	c->fd = -1;
	c->lost = 1;
	ibc_launch_buf_free(&c->out);
	if (c == &a->parent) {
		if (!a->terminating)
			ibc_debug("launch: node agent %d lost its parent; ending", a->me);
		a->parent_lost = 1;
		ibc_launch_terminate(a);
	} else if (!c->done) {
		ibc_launch_fail(a, -1, 1, "lost the node agent on %s", conn_host(a, c));
	}
}

static void conn_read(struct ibc_launch_agent *a, struct ibc_launch_conn *c)
{
	char buf[65536];
	ssize_t r = read(c->fd, buf, sizeof(buf));

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		conn_lost(a, c);
		return;
	}
	ibc_launch_buf_append(&c->in, buf, (size_t)r);
	for (;;) {
		struct ibc_launch_hdr h;
		int rc = ibc_launch_hdr_decode(ibc_launch_buf_head(&c->in), ibc_launch_buf_avail(&c->in),
					       IBC_LAUNCH_WIRE_MAX, &h);

		if (rc == IBC_ERR_AGAIN)
			break;
		if (rc != IBC_OK) {
			ibc_error("launch: malformed frame from %s", conn_host(a, c));
			ibc_launch_fail(a, -1, 1, "malformed frame from %s", conn_host(a, c));
			conn_lost(a, c);
			return;
		}
		on_frame(a, c, &h, ibc_launch_buf_head(&c->in) + IBC_LAUNCH_WIRE_HDR);
		if (c->fd < 0)
			return;
		ibc_launch_buf_consume(&c->in, IBC_LAUNCH_WIRE_HDR + h.len);
	}
}

static void buf_flush(int *fd, struct ibc_launch_buf *b)
{
	while (*fd >= 0 && ibc_launch_buf_avail(b) > 0) {
		ssize_t w = send(*fd, ibc_launch_buf_head(b), ibc_launch_buf_avail(b), MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(*fd, ibc_launch_buf_head(b), ibc_launch_buf_avail(b));
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w <= 0) {
			ibc_launch_buf_free(b);
			return;
		}
		ibc_launch_buf_consume(b, (size_t)w);
	}
}

/* ---------------------------------------------------------- accepting --- */

static void pending_hello(struct ibc_launch_agent *a, int pi)
{
	struct ibc_launch_conn *c = &a->pend[pi];
	char buf[256];
	ssize_t r = read(c->fd, buf, sizeof(buf));
	struct ibc_launch_hdr h;
	int rc;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r > 0)
		ibc_launch_buf_append(&c->in, buf, (size_t)r);
	rc = r > 0 ? ibc_launch_hdr_decode(ibc_launch_buf_head(&c->in), ibc_launch_buf_avail(&c->in), 64, &h)
		   : IBC_ERR_CLOSED;
	if (rc == IBC_ERR_AGAIN)
		return;
	if (rc == IBC_OK && h.type == IBC_LAUNCH_MSG_HELLO && h.seq == a->job.token && h.aux == 1 && (int)h.src >= a->first_child &&
	    (int)h.src < a->first_child + a->nchild && a->child[h.src - (uint32_t)a->first_child].fd < 0 &&
	    ibc_launch_buf_avail(&c->in) == IBC_LAUNCH_WIRE_HDR + h.len) {
		struct ibc_launch_conn *ch = &a->child[h.src - (uint32_t)a->first_child];
		struct ibc_launch_buf jb = { 0 };

		ch->fd = c->fd;
		ch->hello = 1;
		ibc_launch_job_encode(&a->job, &jb);
		link_send(a, ch, IBC_LAUNCH_MSG_JOB, 0, h.src, 0, 0, ibc_launch_buf_head(&jb), ibc_launch_buf_avail(&jb));
		ibc_launch_buf_free(&jb);
		if (a->terminating)
			link_send(a, ch, IBC_LAUNCH_MSG_TERMINATE, 0, 0, 0, 0, NULL, 0);
	} else if (rc == IBC_OK && h.type == IBC_LAUNCH_MSG_HELLO && h.seq == a->job.token && h.aux == 2 && a->flat &&
		   h.src < a->job.np && a->proc[h.src].sock < 0 &&
		   ibc_launch_buf_avail(&c->in) == IBC_LAUNCH_WIRE_HDR + h.len) {
		struct ibc_launch_proc *p = &a->proc[h.src];
		struct ibc_launch_buf jb = { 0 };
		struct ibc_launch_hdr jh = { .type = IBC_LAUNCH_MSG_JOB, .dst = h.src };

		p->sock = c->fd;
		ibc_launch_job_encode(&a->job, &jb);
		ibc_launch_buf_put_frame(&p->out, &jh, ibc_launch_buf_head(&jb), ibc_launch_buf_avail(&jb));
		ibc_launch_buf_free(&jb);
	} else {
		if (r > 0 && !a->terminating)
			ibc_warn("launch: dropping a connection with a bad greeting");
		close(c->fd);
	}
	ibc_launch_buf_free(&c->in);
	a->pend[pi] = a->pend[--a->npend];
}

static void do_accept(struct ibc_launch_agent *a)
{
	int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;
	struct ibc_launch_conn *np;

	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	np = realloc(a->pend, (size_t)(a->npend + 1) * sizeof(*np));
	if (np == NULL) {
		close(fd);
		return;
	}
	a->pend = np;
	memset(&a->pend[a->npend], 0, sizeof(*np));
	a->pend[a->npend].fd = fd;
	a->pend[a->npend].idx = -1;
	a->npend++;
}

/* ------------------------------------------------------------- health --- */

static void reap(struct ibc_launch_agent *a)
{
	int st, i;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (i = 0; i < a->nproc; i++) {
			struct ibc_launch_proc *p = &a->proc[i];

			if (p->pid == pid && !p->reaped) {
				p->reaped = 1;
				p->status = st;
				p->reaped_at = ibc_launch_now();
			}
		}
		for (i = 0; i < a->nchild; i++) {
			struct ibc_launch_conn *c = &a->child[i];

			if (c->pid == pid && !c->reaped) {
				c->reaped = 1;
				c->status = st;
				if (!c->done && !a->terminating) {
					char s[128];

					proc_status_text(st, s, sizeof(s));
					if (!c->hello)
						ibc_launch_fail(a, -1, 1, "could not start the node agent on %s: the remote shell %s",
								a->job.hosts[c->idx - 1], s);
					else if (c->fd < 0 || c->lost)
						ibc_launch_fail(a, -1, 1, "the node agent on %s %s", a->job.hosts[c->idx - 1], s);
				}
			}
		}
	}
}

static void proc_check_finished(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	double now = ibc_launch_now();
	int s;

	if (p->finished || !p->reaped)
		return;
	if ((p->ofd[0] >= 0 || p->ofd[1] >= 0) && !a->terminating && now - p->reaped_at < 2.0)
		return;
	for (s = 0; s < 2; s++) {
		if (p->ofd[s] >= 0) {
			proc_read_output(a, p, s);
			if (p->ofd[s] >= 0) {
				output_lines(a, p, s, 1);
				close(p->ofd[s]);
				p->ofd[s] = -1;
			}
		}
	}
	p->finished = 1;
	/* nothing the process left behind in its group outlives it */
	if (p->pid > 0)
		kill(-p->pid, SIGKILL);
	if (p->infd >= 0) {
		close(p->infd);
		p->infd = -1;
	}
	if (p->sock >= 0) {
		buf_flush(&p->sock, &p->out);
		close(p->sock);
		p->sock = -1;
	}
	if (p->status == 0 && p->inited && !p->finalized && !a->terminating) {
		ibc_launch_fail(a, p->rank, 1, "rank %d on %s exited without PMI finalize", p->rank, host_of(a, p->rank));
		return;
	}
	if (p->status != 0 && !a->terminating) {
		char s2[128];

		proc_status_text(p->status, s2, sizeof(s2));
		ibc_launch_fail(a, p->rank, ibc_launch_status_code(p->status), "rank %d on %s %s%s", p->rank,
				host_of(a, p->rank), s2,
				a->flat && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 127
					? " (program or remote shell not found?)" : "");
	}
}

static int all_finished(struct ibc_launch_agent *a)
{
	int i;

	for (i = 0; i < a->nproc; i++)
		if (!a->proc[i].finished)
			return 0;
	for (i = 0; i < a->nchild; i++) {
		struct ibc_launch_conn *c = &a->child[i];

		if (!c->done && !(c->reaped && (c->fd < 0 || a->terminating)) && !(c->lost && a->terminating))
			return 0;
	}
	return 1;
}

static int children_reaped(struct ibc_launch_agent *a)
{
	int i;

	for (i = 0; i < a->nchild; i++)
		if (a->child[i].pid > 0 && !a->child[i].reaped)
			return 0;
	return 1;
}

static void kill_children(struct ibc_launch_agent *a, int sig)
{
	int i;

	for (i = 0; i < a->nchild; i++)
		if (a->child[i].pid > 0 && !a->child[i].reaped)
			kill(a->child[i].pid, sig);
	for (i = 0; i < a->nproc; i++)
		if (a->proc[i].pid > 0 && !a->proc[i].reaped)
			kill(-a->proc[i].pid, sig);
}

/* ---------------------------------------------------------------- loop --- */

static int setup(struct ibc_launch_agent *a)
{
	int i, j, n;

	a->ntree = (int)a->job.nnodes + 1;
	a->k = (int)a->job.degree;
	a->flat = a->job.mode == IBC_LAUNCH_MODE_FLAT;
	if (ibc_launch_cache_init(&a->cache, (a->me != 0 && a->job.cache == IBC_LAUNCH_CACHE_HCMAB_LRU)
					       ? a->job.cache_bound : 0) != IBC_OK)
		return IBC_ERR_NOMEM;
	if (a->flat) {
		a->nproc = (int)a->job.np;
		a->first_rank = 0;
		a->nchild = 0;
	} else {
		n = ibc_launch_tree_children(a->me, a->k, a->ntree, &a->first_child);
		a->nchild = n;
		if (a->me > 0) {
			a->first_rank = a->job.start[a->me - 1];
			a->nproc = a->job.start[a->me] - a->first_rank;
		}
		a->subtree_ranks = 0;
		for (j = 1; j < a->ntree; j++)
			if (ibc_launch_tree_in_subtree(j, a->me, a->k))
				a->subtree_ranks += a->job.start[j] - a->job.start[j - 1];
	}
	a->child = calloc((size_t)a->nchild + 1, sizeof(*a->child));
	a->proc = calloc((size_t)a->nproc + 1, sizeof(*a->proc));
	if (a->child == NULL || a->proc == NULL)
		return IBC_ERR_NOMEM;
	for (i = 0; i < a->nchild; i++) {
		a->child[i].fd = -1;
		a->child[i].idx = a->first_child + i;
	}
	for (i = 0; i < a->nproc; i++) {
		struct ibc_launch_proc *p = &a->proc[i];

		p->rank = a->first_rank + i;
		p->lrank = i;
		p->sock = p->infd = -1;
		p->ofd[0] = p->ofd[1] = -1;
		p->stdin_eof = p->rank != 0; /* stdin goes to rank 0 only */
	}
	return IBC_OK;
}

static int start_children(struct ibc_launch_agent *a)
{
	int i, rc;

	for (i = 0; i < a->nchild; i++) {
		struct ibc_launch_conn *c = &a->child[i];
		char spec[128], *cmd[4];

		snprintf(spec, sizeof(spec), "%s:%d:%d:%u",
			 a->child_addr != NULL ? a->child_addr[i] : a->addr, a->port, c->idx, a->job.token);
		cmd[0] = a->job.self;
		cmd[1] = (char *)"--agent";
		cmd[2] = spec;
		cmd[3] = NULL;
		rc = spawn_rsh(a, a->job.hosts[c->idx - 1], cmd, NULL, &c->pid);
		if (rc != IBC_OK) {
			ibc_launch_fail(a, -1, 1, "could not start the remote shell for %s", a->job.hosts[c->idx - 1]);
			goto out_mark;
		}
		c->spawned_at = ibc_launch_now();
	}
	for (i = 0; i < a->nproc && !a->terminating; i++) {
		struct ibc_launch_proc *p = &a->proc[i];

		if (a->flat) {
			char spec[128], *cmd[4];
			int io[3];

			snprintf(spec, sizeof(spec), "%s:%d:%d:%u",
				 a->child_addr != NULL ? a->child_addr[rank_node(a, p->rank)] : a->addr, a->port,
				 p->rank, a->job.token);
			cmd[0] = a->job.self;
			cmd[1] = (char *)"--proxy";
			cmd[2] = spec;
			cmd[3] = NULL;
			rc = spawn_rsh(a, host_of(a, p->rank), cmd, io, &p->pid);
			if (rc != IBC_OK) {
				ibc_launch_fail(a, p->rank, 1, "could not start rank %d on %s", p->rank,
						host_of(a, p->rank));
				break;
			}
			p->infd = io[0];
			p->ofd[0] = io[1];
			p->ofd[1] = io[2];
			ibc_launch_fd_nonblock(p->infd);
			ibc_launch_fd_nonblock(p->ofd[0]);
			ibc_launch_fd_nonblock(p->ofd[1]);
		} else if (spawn_local(a, p) != IBC_OK) {
			break;
		}
	}
out_mark:
	/* processes never started (the job already fails) count as finished */
	for (i = 0; i < a->nproc; i++)
		if (a->proc[i].pid == 0)
			a->proc[i].reaped = a->proc[i].finished = 1;
	return IBC_OK;
}

/* Stdin is read only once rank 0's side can take it (its NLA connected). */
static int stdin_ready(struct ibc_launch_agent *a)
{
	int ch = -1;

	if (route(a, 0, &ch) != 1)
		return 1;
	return a->child[ch].fd >= 0;
}

static void stdin_read(struct ibc_launch_agent *a)
{
	char buf[16384];
	ssize_t r = read(a->stdin_fd, buf, sizeof(buf));
	struct ibc_launch_proc *p0 = (a->nproc > 0 && a->proc[0].rank == 0) ? &a->proc[0] : NULL;
	int ch = -1;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r < 0)
		r = 0;
	if (r == 0)
		a->stdin_fd = -1;
	if (p0 != NULL) {
		if (r == 0)
			p0->stdin_eof = 1;
		else
			ibc_launch_buf_append(&p0->inq, buf, (size_t)r);
	} else if (route(a, 0, &ch) == 1) {
		link_send(a, &a->child[ch], IBC_LAUNCH_MSG_STDIN, 0, 0, 0, 0, buf, (size_t)r);
	}
}

enum { PF_LISTEN = 1, PF_PARENT, PF_CHILD, PF_PEND, PF_SOCK, PF_OUT, PF_ERR, PF_IN, PF_STDIN, PF_SIG };

int ibc_launch_agent_run(struct ibc_launch_agent *a)
{
	struct pollfd *pfd = NULL;
	int *kind = NULL, *who = NULL, rc;
	size_t cap = 0;
	sigset_t mask;

	rc = setup(a);
	if (rc != IBC_OK)
		return rc;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	a->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (a->sigfd < 0) {
		ibc_error("launch: signalfd: %s", strerror(errno));
		return IBC_ERR_SYS;
	}
	start_children(a);
	for (;;) {
		size_t n = 0, need = (size_t)(8 + a->nchild + a->npend + 4 * a->nproc);
		double now;
		int i, pr;

		if (need > cap) {
			cap = need * 2;
			free(pfd);
			free(kind);
			free(who);
			pfd = calloc(cap, sizeof(*pfd));
			kind = calloc(cap, sizeof(*kind));
			who = calloc(cap, sizeof(*who));
			if (pfd == NULL || kind == NULL || who == NULL) {
				rc = IBC_ERR_NOMEM;
				break;
			}
		}
		/* flush what is queued, progress blocked processes */
		buf_flush(&a->parent.fd, &a->parent.out);
		for (i = 0; i < a->nchild; i++)
			buf_flush(&a->child[i].fd, &a->child[i].out);
		for (i = 0; i < a->nproc; i++) {
			struct ibc_launch_proc *p = &a->proc[i];

			proc_input(a, p);
			buf_flush(&p->sock, &p->out);
			if (p->infd >= 0) {
				buf_flush(&p->infd, &p->inq);
				if (p->stdin_eof && ibc_launch_buf_avail(&p->inq) == 0) {
					close(p->infd);
					p->infd = -1;
				}
			}
			proc_check_finished(a, p);
		}
		now = ibc_launch_now();
		for (i = 0; i < a->nchild && !a->terminating; i++) {
			struct ibc_launch_conn *c = &a->child[i];

			if (c->pid > 0 && !c->hello && !c->reaped && now - c->spawned_at > IBC_LAUNCH_CONNECT_TIMEOUT)
				ibc_launch_fail(a, -1, 1, "the node agent on %s did not connect within %d s",
						a->job.hosts[c->idx - 1], IBC_LAUNCH_CONNECT_TIMEOUT);
		}
		if (a->me == 0 && a->timeout > 0 && !a->terminating && now > a->deadline)
			ibc_launch_fail(a, -1, 124, "the job timed out after %g s", a->timeout);
		if (a->terminating && !a->killed && now > a->kill_at) {
			int j;

			a->killed = 1;
			for (j = 0; j < a->nproc; j++)
				if (a->proc[j].pid > 0 && !a->proc[j].reaped)
					kill(-a->proc[j].pid, SIGKILL);
		}
		if (all_finished(a)) {
			if (a->me != 0 && !a->done_sent && !a->parent_lost) {
				struct ibc_launch_buf b = { 0 };

				stats_record(a, &b);
				ibc_launch_buf_append(&b, ibc_launch_buf_head(&a->stats), ibc_launch_buf_avail(&a->stats));
				send_up(a, IBC_LAUNCH_MSG_DONE, (uint32_t)a->me, 0, 0, a->nstats + 1,
					ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b));
				ibc_launch_buf_free(&b);
				a->done_sent = 1;
				buf_flush(&a->parent.fd, &a->parent.out);
			}
			if (children_reaped(a) && (a->me == 0 || a->parent.fd < 0 ||
						   ibc_launch_buf_avail(&a->parent.out) == 0))
				break;
			if (a->final_deadline == 0)
				a->final_deadline = now + 3.0;
		}
		if (a->final_deadline > 0 && now > a->final_deadline) {
			kill_children(a, SIGKILL);
			if (now > a->final_deadline + 2.0)
				break;
		}
		/* build the poll set */
		if (a->listen_fd >= 0) {
			pfd[n] = (struct pollfd){ .fd = a->listen_fd, .events = POLLIN };
			kind[n++] = PF_LISTEN;
		}
		if (a->parent.fd >= 0) {
			pfd[n] = (struct pollfd){ .fd = a->parent.fd,
						  .events = (short)(POLLIN | (ibc_launch_buf_avail(&a->parent.out) ? POLLOUT : 0)) };
			kind[n++] = PF_PARENT;
		}
		for (i = 0; i < a->nchild; i++) {
			if (a->child[i].fd < 0)
				continue;
			pfd[n] = (struct pollfd){ .fd = a->child[i].fd,
						  .events = (short)(POLLIN | (ibc_launch_buf_avail(&a->child[i].out) ? POLLOUT : 0)) };
			who[n] = i;
			kind[n++] = PF_CHILD;
		}
		for (i = 0; i < a->npend; i++) {
			pfd[n] = (struct pollfd){ .fd = a->pend[i].fd, .events = POLLIN };
			who[n] = i;
			kind[n++] = PF_PEND;
		}
		for (i = 0; i < a->nproc; i++) {
			struct ibc_launch_proc *p = &a->proc[i];

			if (p->sock >= 0) {
				pfd[n] = (struct pollfd){ .fd = p->sock,
							  .events = (short)((p->wait == WAIT_NONE ? POLLIN : 0) |
									    (ibc_launch_buf_avail(&p->out) ? POLLOUT : 0)) };
				who[n] = i;
				kind[n++] = PF_SOCK;
			}
			if (p->ofd[0] >= 0) {
				pfd[n] = (struct pollfd){ .fd = p->ofd[0], .events = POLLIN };
				who[n] = i;
				kind[n++] = PF_OUT;
			}
			if (p->ofd[1] >= 0) {
				pfd[n] = (struct pollfd){ .fd = p->ofd[1], .events = POLLIN };
				who[n] = i;
				kind[n++] = PF_ERR;
			}
			if (p->infd >= 0 && ibc_launch_buf_avail(&p->inq) > 0) {
				pfd[n] = (struct pollfd){ .fd = p->infd, .events = POLLOUT };
				who[n] = i;
				kind[n++] = PF_IN;
			}
		}
		if (a->me == 0 && a->stdin_fd >= 0 && !a->terminating && stdin_ready(a)) {
			pfd[n] = (struct pollfd){ .fd = a->stdin_fd, .events = POLLIN };
			kind[n++] = PF_STDIN;
		}
		pfd[n] = (struct pollfd){ .fd = a->sigfd, .events = POLLIN };
		kind[n++] = PF_SIG;
		pr = poll(pfd, (nfds_t)n, 100);
		if (pr < 0 && errno != EINTR) {
			ibc_error("launch: poll: %s", strerror(errno));
			rc = IBC_ERR_SYS;
			break;
		}
		for (i = 0; pr > 0 && i < (int)n; i++) {
			struct ibc_launch_proc *p;

			if (pfd[i].revents == 0)
				continue;
			switch (kind[i]) {
			case PF_LISTEN:
				do_accept(a);
				break;
			case PF_PARENT:
				if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
					conn_read(a, &a->parent);
				break;
			case PF_CHILD:
				if (a->child[who[i]].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
					conn_read(a, &a->child[who[i]]);
				break;
			case PF_PEND:
				/* indices shift when one completes: handle one per round */
				if (who[i] < a->npend && a->pend[who[i]].fd == pfd[i].fd) {
					pending_hello(a, who[i]);
					i = (int)n;
				}
				break;
			case PF_SOCK: {
				char buf[65536];
				ssize_t r;

				p = &a->proc[who[i]];
				if (p->sock < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
					break;
				r = read(p->sock, buf, sizeof(buf));
				if (r < 0 && (errno == EAGAIN || errno == EINTR))
					break;
				if (r <= 0) {
					close(p->sock);
					p->sock = -1;
					ibc_launch_buf_free(&p->out);
					break;
				}
				ibc_launch_buf_append(&p->in, buf, (size_t)r);
				proc_input(a, p);
				break;
			}
			case PF_OUT:
			case PF_ERR:
				p = &a->proc[who[i]];
				if (p->ofd[kind[i] == PF_ERR] >= 0)
					proc_read_output(a, p, kind[i] == PF_ERR);
				break;
			case PF_IN:
				p = &a->proc[who[i]];
				if (pfd[i].revents & (POLLERR | POLLHUP)) {
					close(p->infd);
					p->infd = -1;
					ibc_launch_buf_free(&p->inq);
				}
				break;
			case PF_STDIN:
				stdin_read(a);
				break;
			case PF_SIG: {
				struct signalfd_siginfo si;

				while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						reap(a);
					} else if (a->me == 0) {
						char s[64];

						sig_name((int)si.ssi_signo, s, sizeof(s));
						if (a->terminating)
							a->final_deadline = ibc_launch_now();
						ibc_launch_fail(a, -1, 128 + (int)si.ssi_signo, "ibchar-launch got %s", s);
					} else {
						a->parent_lost = 1;
						ibc_launch_terminate(a);
					}
				}
				break;
			}
			default:
				break;
			}
		}
	}
	reap(a);
	free(pfd);
	free(kind);
	free(who);
	return rc;
}

void ibc_launch_agent_free(struct ibc_launch_agent *a)
{
	int i;

	for (i = 0; i < a->nproc; i++) {
		struct ibc_launch_proc *p = &a->proc[i];

		if (p->sock >= 0)
			close(p->sock);
		if (p->infd >= 0)
			close(p->infd);
		for (int s = 0; s < 2; s++) {
			if (p->ofd[s] >= 0)
				close(p->ofd[s]);
			ibc_launch_buf_free(&p->line[s]);
		}
		ibc_launch_buf_free(&p->in);
		ibc_launch_buf_free(&p->out);
		ibc_launch_buf_free(&p->inq);
		while (p->mbox) {
			struct ibc_launch_msgq *m = p->mbox;

			p->mbox = m->next;
			free(m);
		}
	}
	for (i = 0; i < a->nchild; i++) {
		if (a->child[i].fd >= 0)
			close(a->child[i].fd);
		ibc_launch_buf_free(&a->child[i].in);
		ibc_launch_buf_free(&a->child[i].out);
	}
	for (i = 0; i < a->npend; i++) {
		close(a->pend[i].fd);
		ibc_launch_buf_free(&a->pend[i].in);
	}
	if (a->parent.fd >= 0)
		close(a->parent.fd);
	ibc_launch_buf_free(&a->parent.in);
	ibc_launch_buf_free(&a->parent.out);
	while (a->colls)
		coll_free(a, a->colls);
	while (a->gets) {
		struct ibc_launch_getwait *w = a->gets;

		a->gets = w->next;
		free(w->key);
		free(w);
	}
	if (a->listen_fd >= 0)
		close(a->listen_fd);
	if (a->sigfd >= 0)
		close(a->sigfd);
	ibc_launch_cache_fini(&a->cache);
	ibc_launch_buf_free(&a->kvpend);
	ibc_launch_buf_free(&a->stats);
	free(a->proc);
	free(a->child);
	free(a->pend);
	ibc_launch_job_free(&a->job);
}
