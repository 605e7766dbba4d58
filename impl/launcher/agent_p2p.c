/* The node agent's point-to-point messages: delivery to a local process's
 * mailbox or along the tree, and matching a blocked receive. */
#include "launcher/agent_loop.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ point to point --- */

static int msg_match(const struct ibc_launch_msgq *m, int src, int tag)
{
	return (src < 0 || m->src == src) && (tag < 0 || m->tag == tag);
}

void ibc_launch_p2p_try_recv(struct ibc_launch_proc *p)
{
	struct ibc_launch_msgq **pp = &p->mbox, *prev = NULL;

	if (p->wait != IBC_LAUNCH_WAIT_RECV)
		return;
	for (; *pp; prev = *pp, pp = &(*pp)->next) {
		struct ibc_launch_msgq *m = *pp;

		if (!msg_match(m, p->recv_src, p->recv_tag))
			continue;
		*pp = m->next;
		if (p->mbox_tail == m)
			p->mbox_tail = prev;
		ibc_launch_proc_replyf(p, m->data, m->len, "cmd=ibc_recv_result rc=0 src=%d tag=%d bytes=%zu", m->src,
			    m->tag, m->len);
		free(m);
		p->wait = IBC_LAUNCH_WAIT_NONE;
		return;
	}
}

void ibc_launch_p2p_deliver(struct ibc_launch_agent *a, int src, int dst, int tag, const void *d, size_t len)
{
	int ch = -1;

	switch (ibc_launch_route(a, dst, &ch)) {
	case 0: {
		struct ibc_launch_proc *p = a->flat ? &a->proc[dst] : ibc_launch_proc_local(a, dst);
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
		ibc_launch_p2p_try_recv(p);
		break;
	}
	case 1:
		ibc_launch_link_send(a, &a->child[ch], IBC_LAUNCH_MSG_P2P, (uint32_t)src, (uint32_t)dst, (uint32_t)tag, 0, d, len);
		break;
	default:
		ibc_launch_parent_send(a, IBC_LAUNCH_MSG_P2P, (uint32_t)src, (uint32_t)dst, (uint32_t)tag, 0, d, len);
		break;
	}
}
