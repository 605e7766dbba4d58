/* The node agent's event loop: frames from tree links, accepting node
 * agents, process health (reaping, finishing, killing) and the poll loop.
 * Used by the launcher (root) and by every node launch agent (NLA). */
#define _GNU_SOURCE
#include "launcher/agent_loop.h"
#include "launcher/tree.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define IBC_LAUNCH_CONNECT_TIMEOUT 30 /* s for a started node agent to say HELLO */
#define IBC_LAUNCH_HELLO_TIMEOUT 10.0 /* s for an accepted connection to say HELLO */

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
			ibc_launch_coll_up(a, c, h, pl);
		break;
	case IBC_LAUNCH_MSG_COLL_DOWN: {
		struct ibc_launch_coll *co = ibc_launch_agent_coll_find(a, h->seq, 0);

		if (from_parent && co != NULL)
			ibc_launch_coll_down(a, co, pl, h->len);
		else
			ibc_launch_fail(a, -1, 1, "node agent %d: result of unknown collective %u", a->me, h->seq);
		break;
	}
	case IBC_LAUNCH_MSG_P2P:
		if (h->dst >= a->job.np || h->src >= a->job.np) {
			ibc_launch_fail(a, -1, 1, "node agent %d: P2P to bad rank %u", a->me, h->dst);
			break;
		}
		ibc_launch_p2p_deliver(a, (int)h->src, (int)h->dst, (int)h->seq, pl, h->len);
		break;
	case IBC_LAUNCH_MSG_PUT:
		ibc_launch_bb_on_put(a, h, pl);
		break;
	case IBC_LAUNCH_MSG_GET_REQ: {
		struct ibc_launch_rd rd;
		char *key;

		ibc_launch_rd_init(&rd, pl, h->len);
		key = ibc_launch_rd_strdup(&rd);
		if (key == NULL || ch < 0) {
			ibc_launch_fail(a, -1, 1, "node agent %d: malformed GET_REQ", a->me);
		} else {
			ibc_launch_bb_get(a, key, -1, ch);
		}
		free(key);
		break;
	}
	case IBC_LAUNCH_MSG_GET_RESP:
		ibc_launch_bb_on_get_resp(a, h, pl);
		break;
	case IBC_LAUNCH_MSG_OUTPUT:
		if (a->me == 0)
			ibc_launch_output_emit(a, (int)h->src, (int)h->aux, pl, h->len);
		else
			ibc_launch_parent_send(a, h->type, h->src, h->dst, h->seq, h->aux, pl, h->len);
		break;
	case IBC_LAUNCH_MSG_STDIN: {
		struct ibc_launch_proc *p = ibc_launch_proc_local(a, (int)h->dst);

		if (p == NULL) {
			int cc = -1;

			if (ibc_launch_route(a, (int)h->dst, &cc) == 1)
				ibc_launch_link_send(a, &a->child[cc], h->type, h->src, h->dst, h->seq, h->aux, pl, h->len);
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
			ibc_launch_parent_send(a, h->type, h->src, h->dst, h->seq, h->aux, pl, h->len);
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

void ibc_launch_agent_frame(struct ibc_launch_agent *a, struct ibc_launch_conn *c, const struct ibc_launch_hdr *h,
			    const unsigned char *pl)
{
	on_frame(a, c, h, pl);
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
		ibc_launch_link_send(a, ch, IBC_LAUNCH_MSG_JOB, 0, h.src, 0, 0, ibc_launch_buf_head(&jb), ibc_launch_buf_avail(&jb));
		ibc_launch_buf_free(&jb);
		if (a->terminating)
			ibc_launch_link_send(a, ch, IBC_LAUNCH_MSG_TERMINATE, 0, 0, 0, 0, NULL, 0);
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

/* s an accepted connection has for its HELLO: IBC_LAUNCH_HELLO_TIMEOUT, or
 * the environment's IBC_LAUNCH_HELLO_TIMEOUT when it is a positive number. */
static double hello_timeout(void)
{
	const char *v = getenv("IBC_LAUNCH_HELLO_TIMEOUT");
	char *end = NULL;
	double t = v != NULL ? strtod(v, &end) : 0;

	return v != NULL && end != v && *end == '\0' && t > 0 ? t : IBC_LAUNCH_HELLO_TIMEOUT;
}

/* Closes the accepted connections that sent no whole HELLO in time: a peer
 * that connects and says nothing (or half a frame) holds no fd for the
 * rest of the job. */
static void pending_expire(struct ibc_launch_agent *a, double now)
{
	double limit = hello_timeout();
	int i = 0;

	while (i < a->npend) {
		struct ibc_launch_conn *c = &a->pend[i];

		if (now - c->spawned_at <= limit) {
			i++;
			continue;
		}
		if (!a->terminating)
			ibc_warn("launch: closing a connection that sent no HELLO within %g s (%zu bytes)", limit,
				 ibc_launch_buf_avail(&c->in));
		close(c->fd);
		ibc_launch_buf_free(&c->in);
		a->pend[i] = a->pend[--a->npend];
	}
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
	a->pend[a->npend].spawned_at = ibc_launch_now(); /* accepted at: HELLO timeout */
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

					ibc_launch_status_text(st, s, sizeof(s));
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
			ibc_launch_output_read(a, p, s);
			if (p->ofd[s] >= 0) {
				ibc_launch_output_lines(a, p, s, 1);
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
		ibc_launch_fail(a, p->rank, 1, "rank %d on %s exited without PMI finalize", p->rank, ibc_launch_host_of(a, p->rank));
		return;
	}
	if (p->status != 0 && !a->terminating) {
		char s2[128];

		ibc_launch_status_text(p->status, s2, sizeof(s2));
		ibc_launch_fail(a, p->rank, ibc_launch_status_code(p->status), "rank %d on %s %s%s", p->rank,
				ibc_launch_host_of(a, p->rank), s2,
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
		rc = ibc_launch_spawn_rsh(a, a->job.hosts[c->idx - 1], cmd, NULL, &c->pid);
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
				 a->child_addr != NULL ? a->child_addr[ibc_launch_agent_node_of(a, p->rank)] : a->addr, a->port,
				 p->rank, a->job.token);
			cmd[0] = a->job.self;
			cmd[1] = (char *)"--proxy";
			cmd[2] = spec;
			cmd[3] = NULL;
			rc = ibc_launch_spawn_rsh(a, ibc_launch_host_of(a, p->rank), cmd, io, &p->pid);
			if (rc != IBC_OK) {
				ibc_launch_fail(a, p->rank, 1, "could not start rank %d on %s", p->rank,
						ibc_launch_host_of(a, p->rank));
				break;
			}
			p->infd = io[0];
			p->ofd[0] = io[1];
			p->ofd[1] = io[2];
			ibc_launch_fd_nonblock(p->infd);
			ibc_launch_fd_nonblock(p->ofd[0]);
			ibc_launch_fd_nonblock(p->ofd[1]);
		} else if (ibc_launch_spawn_local(a, p) != IBC_OK) {
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

			ibc_launch_proc_input(a, p);
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
		pending_expire(a, now);
		if (a->me == 0 && a->timeout > 0 && !a->terminating && now > a->deadline) {
			char miss[400];

			ibc_launch_agent_coll_missing(a, miss, sizeof(miss));
			ibc_launch_fail(a, -1, 124, "the job timed out after %g s%s%s", a->timeout,
					miss[0] != '\0' ? ": " : "", miss);
		}
		if (a->terminating && !a->stragglers_said) {
			a->stragglers_said = 1;
			ibc_launch_agent_coll_stragglers(a);
		}
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
				ibc_launch_parent_send(a, IBC_LAUNCH_MSG_DONE, (uint32_t)a->me, 0, 0, a->nstats + 1,
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
							  .events = (short)((p->wait == IBC_LAUNCH_WAIT_NONE ? POLLIN : 0) |
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
		if (a->me == 0 && a->stdin_fd >= 0 && !a->terminating && ibc_launch_stdin_ready(a)) {
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
				ibc_launch_proc_input(a, p);
				break;
			}
			case PF_OUT:
			case PF_ERR:
				p = &a->proc[who[i]];
				if (p->ofd[kind[i] == PF_ERR] >= 0)
					ibc_launch_output_read(a, p, kind[i] == PF_ERR);
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
				ibc_launch_stdin_read(a);
				break;
			case PF_SIG: {
				struct signalfd_siginfo si;

				while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						reap(a);
					} else if (a->me == 0) {
						char s[64];

						ibc_launch_sig_name((int)si.ssi_signo, s, sizeof(s));
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
		ibc_launch_agent_coll_free(a, a->colls);
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
