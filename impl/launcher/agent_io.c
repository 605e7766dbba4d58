/* The node agent's output and stdin forwarding: a local process's stdout
 * and stderr cut into lines (tagged on request) and sent to the root, and the
 * launcher's stdin to rank 0 only. */
#include "launcher/agent_loop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* -------------------------------------------------------------- output --- */

void ibc_launch_output_emit(struct ibc_launch_agent *a, int rank, int stream, const void *d, size_t n)
{
	if (a->me != 0) {
		ibc_launch_parent_send(a, IBC_LAUNCH_MSG_OUTPUT, (uint32_t)rank, 0, 0, (uint32_t)stream, d, n);
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

void ibc_launch_output_lines(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int s, int eof)
{
	struct ibc_launch_buf *lb = &p->line[s];

	for (;;) {
		const unsigned char *h = ibc_launch_buf_head(lb);
		size_t av = ibc_launch_buf_avail(lb);
		const unsigned char *nl = av ? memchr(h, '\n', av) : NULL;

		if (nl != NULL) {
			ibc_launch_output_emit(a, p->rank, s + 1, h, (size_t)(nl - h));
			ibc_launch_buf_consume(lb, (size_t)(nl - h) + 1);
			continue;
		}
		if (av > 0 && (eof || av >= 65536)) {
			ibc_launch_output_emit(a, p->rank, s + 1, h, av);
			ibc_launch_buf_consume(lb, av);
		}
		break;
	}
}

void ibc_launch_output_read(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int s)
{
	char buf[16384];
	ssize_t r = read(p->ofd[s], buf, sizeof(buf));

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		ibc_launch_output_lines(a, p, s, 1);
		close(p->ofd[s]);
		p->ofd[s] = -1;
		return;
	}
	ibc_launch_buf_append(&p->line[s], buf, (size_t)r);
	ibc_launch_output_lines(a, p, s, 0);
}

/* --------------------------------------------------------------- stdin --- */

/* Stdin is read only once rank 0's side can take it (its NLA connected). */
int ibc_launch_stdin_ready(struct ibc_launch_agent *a)
{
	int ch = -1;

	if (ibc_launch_route(a, 0, &ch) != 1)
		return 1;
	return a->child[ch].fd >= 0;
}

void ibc_launch_stdin_read(struct ibc_launch_agent *a)
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
	} else if (ibc_launch_route(a, 0, &ch) == 1) {
		ibc_launch_link_send(a, &a->child[ch], IBC_LAUNCH_MSG_STDIN, 0, 0, 0, 0, buf, (size_t)r);
	}
}
