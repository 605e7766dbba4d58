/* shm transport, completions: a send's, on this process's send completion
 * queue, and a receive's, the payload delivered into a receive slot claimed
 * at a peer; the reason codes' text.  Under xport_shm.c and
 * shm_mcast.c, which both complete what they execute; over shm_mem.c (the
 * access check and the copies).  See xport_shm.c for the design. */
#include "xport/shm_priv.h"

#include "core/log.h"
#include "core/status.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

const char *const ibc_xport_shm_reason_text[RS_COUNT] = {
	[RS_OK] = "success",
	[RS_BAD_RKEY] = "remote access error: invalid rkey",
	[RS_RANGE] = "remote access error: address range outside the registered region",
	[RS_DEREG] = "remote access error: memory region was deregistered",
	[RS_PERM] = "remote access error: region not registered for this access",
	[RS_LOCAL_PROT] = "local protection error: bad lkey, range or access of a local buffer",
	[RS_REM_INV_REQ] = "remote invalid request: message larger than the receive buffer",
	[RS_LOCAL_LEN] = "local length error: message larger than the receive buffer",
	[RS_ATOMIC_MEM] = "remote access error: atomics need 8-byte aligned shared (mr_alloc) memory",
	[RS_MAP] = "remote access error: cannot map the peer's segment",
	[RS_PVM] = "remote access error: process_vm access to the peer failed",
	[RS_FLUSH] = "work request flushed",
	[RS_REM_OP] = "remote operation error: the receive buffer is not valid (lkey, range or access)",
};

static int scq_push(struct shm *st, const struct ibc_xport_wc *wc)
{
	struct scq_ent *e;

	if (st->scq_count == st->scq_cap) {
		size_t ncap = st->scq_cap ? st->scq_cap * 2 : 256;
		struct scq_ent *n = malloc(ncap * sizeof(*n));
		if (n == NULL) {
			ibc_error("shm: out of memory for the completion queue");
			return IBC_ERR_NOMEM;
		}
		for (size_t i = 0; i < st->scq_count; i++)
			n[i] = st->scq[(st->scq_head + i) % st->scq_cap];
		free(st->scq);
		st->scq = n;
		st->scq_cap = ncap;
		st->scq_head = 0;
	}
	e = &st->scq[(st->scq_head + st->scq_count) % st->scq_cap];
	e->wc = *wc;
	e->q = st->cur_q;
	e->seq = st->cur_seq;
	st->scq_count++;
	return IBC_OK;
}

int ibc_xport_shm_complete_send(struct shm *st, const struct ibc_xport_wr *wr, int reason,
				uint32_t byte_len)
{
	struct ibc_xport_wc wc;

	if (reason == RS_OK && !(wr->flags & IBC_XPORT_WR_SIGNALED))
		return IBC_OK;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr->wr_id;
	wc.status = reason_status(reason);
	wc.opcode = wr->opcode;
	wc.byte_len = byte_len;
	wc.peer = wr->opcode == IBC_XPORT_OP_MCAST_SEND ? -1 : wr->peer;
	wc.reason = reason_str((uint32_t)reason);
	return scq_push(st, &wc);
}

/* Delivers the gathered payload into a claimed receive of ctl owner 'peer'.
 * Returns the sender-side reason. */
int ibc_xport_shm_deliver(struct shm *st, int peer, struct shm_slot *s, uint64_t seq,
			  const struct iovec *iov, int n, uint64_t total, uint32_t opcode,
			  uint32_t imm, uint32_t flags)
{
	struct target dst[IBC_XPORT_MAX_SGE];
	uint64_t cap = 0;
	uint32_t ns = s->num_sge;
	int r;

	if (ns > IBC_XPORT_MAX_SGE)
		ns = IBC_XPORT_MAX_SGE;
	for (uint32_t i = 0; i < ns; i++) {
		if (s->sge[i].len == 0) {
			dst[i].len = 0;
			dst[i].kind = T_PTR;
			dst[i].ptr = NULL;
			continue;
		}
		r = ibc_xport_shm_resolve(st, peer, peer == (int)st->me->rank, s->sge[i].lkey,
					  s->sge[i].addr, s->sge[i].len,
					  IBC_XPORT_ACCESS_LOCAL_WRITE, &dst[i]);
		if (r != RS_OK) {
			slot_finish(s, seq, RS_LOCAL_PROT, opcode, 0, imm, flags,
				    (int)st->me->rank);
			return RS_REM_OP;
		}
		cap += s->sge[i].len;
	}
	if (total > cap) {
		slot_finish(s, seq, RS_LOCAL_LEN, opcode, 0, imm, flags, (int)st->me->rank);
		return RS_REM_INV_REQ;
	}
	r = ibc_xport_shm_copy_scatter(dst, (int)ns, iov, n, total);
	if (r != RS_OK) {
		slot_finish(s, seq, RS_LOCAL_PROT, opcode, 0, imm, flags, (int)st->me->rank);
		return r;
	}
	atomic_thread_fence(memory_order_release);
	slot_finish(s, seq, RS_OK, opcode, (uint32_t)total, imm, flags, (int)st->me->rank);
	return RS_OK;
}
