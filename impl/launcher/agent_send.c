/* The node agent: sending on tree links and to local processes, routing a
 * rank's message (here, a child's subtree or the parent), and failure:
 * recording it, reporting it up and terminating the job. */
#define _GNU_SOURCE
#include "launcher/agent_loop.h"
#include "launcher/proto.h"
#include "launcher/tree.h"
#include "core/log.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

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

/* ------------------------------------------------------------ sending --- */

void ibc_launch_link_send(struct ibc_launch_agent *a, struct ibc_launch_conn *c, int type, uint32_t src,
			  uint32_t dst, uint32_t seq, uint32_t aux, const void *p, size_t n)
{
	struct ibc_launch_hdr h = { .type = (uint8_t)type, .src = src, .dst = dst, .seq = seq, .aux = aux };

	if (c->fd < 0)
		return;
	ibc_launch_buf_put_frame(&c->out, &h, p, n);
	a->ctr.msgs_sent++;
	a->ctr.bytes_sent += IBC_LAUNCH_WIRE_HDR + n;
}

void ibc_launch_parent_send(struct ibc_launch_agent *a, int type, uint32_t src, uint32_t dst, uint32_t seq,
			    uint32_t aux, const void *p, size_t n)
{
	ibc_launch_link_send(a, &a->parent, type, src, dst, seq, aux, p, n);
}

static void proc_write(struct ibc_launch_proc *p, const char *line, const void *payload, size_t n)
{
	if (p->sock < 0)
		return;
	ibc_launch_buf_append(&p->out, line, strlen(line));
	if (n > 0)
		ibc_launch_buf_append(&p->out, payload, n);
}

void ibc_launch_proc_replyf(struct ibc_launch_proc *p, const void *payload, size_t n, const char *fmt, ...)
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

int ibc_launch_agent_node_of(const struct ibc_launch_agent *a, int r)
{
	return ibc_launch_rank_node(a->job.start, (int)a->job.nnodes, r);
}

struct ibc_launch_proc *ibc_launch_proc_local(struct ibc_launch_agent *a, int r)
{
	int i = r - a->first_rank;

	return (i >= 0 && i < a->nproc) ? &a->proc[i] : NULL;
}

/* Where a message for rank r goes from here: 0 local, 1 a child (*child
 * set), 2 the parent. */
int ibc_launch_route(struct ibc_launch_agent *a, int r, int *child)
{
	int t;

	if (a->flat || ibc_launch_proc_local(a, r) != NULL)
		return 0;
	t = ibc_launch_agent_node_of(a, r) + 1;
	if (t > a->me && ibc_launch_tree_in_subtree(t, a->me, a->k)) {
		*child = ibc_launch_tree_route_down(t, a->me, a->k) - a->first_child;
		return 1;
	}
	return 2;
}

/* ------------------------------------------------------------- failure --- */

void ibc_launch_sig_name(int sig, char *buf, size_t n)
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
			ibc_launch_parent_send(a, IBC_LAUNCH_MSG_FAIL, (uint32_t)rank, 0, 0, (uint32_t)code, msg, strlen(msg));
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
			ibc_launch_link_send(a, &a->child[i], IBC_LAUNCH_MSG_TERMINATE, 0, 0, 0, 0, NULL, 0);
	for (i = 0; i < a->nproc; i++) {
		struct ibc_launch_proc *p = &a->proc[i];

		if (p->pid > 0 && !p->reaped)
			kill(-p->pid, SIGTERM);
	}
	a->kill_at = ibc_launch_now() + 1.0;
	a->final_deadline = ibc_launch_now() + 4.0;
}

void ibc_launch_status_text(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status)) {
		char s[64];

		ibc_launch_sig_name(WTERMSIG(status), s, sizeof(s));
		snprintf(buf, n, "was killed by %s", s);
	} else {
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
	}
}

int ibc_launch_status_code(int status)
{
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

const char *ibc_launch_host_of(const struct ibc_launch_agent *a, int rank)
{
	int n = ibc_launch_agent_node_of(a, rank);

	return n >= 0 ? a->job.hosts[n] : "?";
}

/* A protocol violation by a local process: error reply, log, end the job. */
void ibc_launch_proc_proto_error(struct ibc_launch_agent *a, struct ibc_launch_proc *p, const char *resp,
				 const char *why)
{
	ibc_launch_proc_replyf(p, NULL, 0, "cmd=%s rc=-1 msg=%s", resp, why);
	ibc_error("launch: rank %d on %s: PMI protocol error: %s", p->rank, ibc_launch_host_of(a, p->rank), why);
	ibc_launch_fail(a, p->rank, 1, "rank %d on %s broke the PMI protocol: %s", p->rank,
			ibc_launch_host_of(a, p->rank), why);
}
