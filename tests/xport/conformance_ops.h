/* Conformance: caps and the data operations: RDMA write (gather lists, sizes,
 * guards), writes into user memory, read, write with immediate, send/recv,
 * post lists, ordering, atomics under contention.  Part of conformance.c. */
#ifndef IBC_TESTS_XPORT_CONFORMANCE_OPS_H
#define IBC_TESTS_XPORT_CONFORMANCE_OPS_H

#include "conformance.h"

/* ---------------------------------------------------------- caps ------- */

static void test_caps(struct world *w)
{
	const struct ibc_xport_caps *c = &w->x->caps;
	int ok = c->max_sge >= 1 && c->max_sge <= IBC_XPORT_MAX_SGE && c->max_send_wr > 0 &&
		 c->max_recv_wr > 0 && c->max_msg >= 4 * MIB && c->backend[0] != '\0';

	if (strcmp(backend, "auto") != 0)
		ok = ok && strcmp(c->backend, backend) == 0;
	if (R == 0)
		tap_diag("backend %s device %s: inline %u, sge %u, sq %u, rq %u, atomics %d, "
			 "mcast %d (mtu %u, loopback %d), xrc %d, srq %d, user_mem %d, drops %d",
			 c->backend, c->device, c->max_inline, c->max_sge, c->max_send_wr,
			 c->max_recv_wr, c->atomics, c->mcast, c->mcast_mtu, c->mcast_loopback,
			 c->xrc, c->srq, c->user_mem, c->drop_injection);
	check(ok, "caps are sane (backend %s, max_sge %u, max_msg %llu)", c->backend, c->max_sge,
	      (unsigned long long)c->max_msg);
	check(strcmp(ibc_wait_name(IBC_WAIT_SPIN), "spin") == 0 &&
		      strcmp(ibc_wait_name(IBC_WAIT_SPIN_YIELD), "spin-yield") == 0 &&
		      strcmp(ibc_xport_opcode_name(IBC_XPORT_OP_WRITE), "write") == 0,
	      "wait strategy and opcode names");
}

/* ----------------------------------------------------------- writes ---- */

static const size_t sizes[] = { 1, 2, 7, 8, 63, 64, 65, 255, 4095, 4096, 4097,
				65539, 262144, 1 * MIB + 5, 4 * MIB };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Writes that turn among a few registrations of a peer (a flag and a payload
 * buffer, several instances of a collective) land where they should; on shm
 * each key is looked up in the peer's table once, then found in the cache, as
 * a device pays nothing for which key a write names. */
static void test_key_turns(struct world *w)
{
	enum { K = 4, ROUNDS = 25 };
	struct ibc_xport_mr *mr[K] = { NULL };
	struct ibc_xport_rdesc rd[K][MAXR];
	struct ibc_xport_stats s0, s1;
	uint64_t v, *src = (uint64_t *)(void *)w->Bl;
	int k, i, ok = 1;

	for (k = 0; k < K && ok; k++)
		ok = ibc_xport_mr_alloc(w->x, 4096, IBC_XPORT_ACCESS_ALL, &mr[k]) == IBC_OK &&
		     ibc_xport_rdesc_allgather(w->x, &mr[k]->rdesc, rd[k]) == IBC_OK;
	barrier();
	ok = ok && ibc_xport_stats_get(w->x, &s0) == IBC_OK;
	for (i = 0; ok && i < K * ROUNDS; i++) {
		struct ibc_xport_sge s = sge_of(w, w->Bl, 8);

		k = i % K;
		*src = 1000 * (uint64_t)R + (uint64_t)i;
		ok = ibc_xport_write(w->x, right(), &s, 1, rd[k][right()].addr + 64,
				     rd[k][right()].rkey, IBC_XPORT_WR_SIGNALED, 300 + i) == IBC_OK &&
		     wait_ok(w->x, IBC_XPORT_CQ_SEND, 300 + (uint64_t)i, NULL);
	}
	ok = ok && ibc_xport_stats_get(w->x, &s1) == IBC_OK;
	barrier();
	for (k = 0; ok && k < K; k++) {
		memcpy(&v, (char *)mr[k]->addr + 64, sizeof(v));
		ok = v == 1000 * (uint64_t)left() + (uint64_t)(K * (ROUNDS - 1) + k);
	}
	check(ok && s1.key_lookups - s0.key_lookups <= K,
	      "%d writes turning among %d registrations of a peer land right; %llu key lookups "
	      "(shm: one per key, then its cache)", K * ROUNDS, K,
	      (unsigned long long)(s1.key_lookups - s0.key_lookups));
	for (k = 0; k < K; k++)
		if (mr[k] != NULL)
			ibc_xport_mr_dereg(w->x, mr[k]);
}

/* Splits len into nsge pieces placed with gaps inside base (the local area);
 * piece sizes differ so boundaries fall at odd offsets. */
static int build_sges(struct world *w, unsigned char *base, size_t len, int nsge,
		      struct ibc_xport_sge *sge, size_t *span)
{
	size_t off = 3, left_len = len;
	int n = 0;

	for (int i = 0; i < nsge && left_len > 0; i++) {
		size_t piece = i == nsge - 1 ? left_len : left_len / (size_t)(nsge - i);
		if (piece == 0)
			piece = 1;
		if (i % 2 == 1 && piece > 1 && i != nsge - 1)
			piece -= piece / 3;
		sge[n++] = sge_of(w, base + off, piece);
		off += piece + 40 + (size_t)i;
		left_len -= piece;
	}
	*span = off;
	return n;
}

static void test_write(struct world *w)
{
	static const int nsges[] = { 1, 2, 3, 16 };
	const struct ibc_xport_caps *c = &w->x->caps;
	struct ibc_xport_sge sge[IBC_XPORT_MAX_SGE];

	for (size_t si = 0; si < NSIZES; si++) {
		for (size_t gi = 0; gi < sizeof(nsges) / sizeof(nsges[0]); gi++) {
			size_t len = sizes[si], span, toff = 4096 * 3 + 5 + si;
			int want = nsges[gi] > (int)c->max_sge ? (int)c->max_sge : nsges[gi];
			int n, ok = 1;
			uint32_t seed = seed_of(R, (int)si, want);

			if ((size_t)want > len)
				continue;
			/* target: guards around the range my left will write */
			memset(w->A + toff - GUARD, 0xEE, len + 2 * GUARD);
			n = build_sges(w, w->Bl, len, want, sge, &span);
			for (int i = 0, pos = 0; i < n; pos += (int)sge[i].len, i++)
				fill((unsigned char *)(uintptr_t)sge[i].addr, sge[i].len, seed, (size_t)pos);
			barrier();
			if (ibc_xport_write(w->x, right(), sge, n, raddr_of(w, right(), toff),
					    w->rd[right()].rkey, IBC_XPORT_WR_SIGNALED, 100 + si) != IBC_OK)
				ok = 0;
			else
				ok = wait_ok(w->x, IBC_XPORT_CQ_SEND, 100 + si, NULL);
			barrier();
			ok = ok && verify(w->A + toff, len, seed_of(left(), (int)si, want), 0) &&
			     all_bytes(w->A + toff - GUARD, GUARD, 0xEE) &&
			     all_bytes(w->A + toff + len, GUARD, 0xEE);
			check(ok, "write %zu B gathered from %d sge(s): data and guards right", len, n);
		}
	}
	/* inline: payload from unregistered stack memory, reusable at once */
	if (c->max_inline == 0) {
		skip(1, "backend has no inline writes");
	} else {
		unsigned char stack[2048];
		size_t len = c->max_inline < sizeof(stack) ? c->max_inline : sizeof(stack);
		struct ibc_xport_sge s2[2];
		int ok = 1;
		uint32_t seed = seed_of(R, 77, 1);

		memset(w->A, 0xEE, len + GUARD);
		fill(stack, len, seed, 0);
		s2[0].addr = (uint64_t)(uintptr_t)stack;
		s2[0].len = (uint32_t)(len / 2);
		s2[0].lkey = 0;
		s2[1].addr = (uint64_t)(uintptr_t)(stack + len / 2);
		s2[1].len = (uint32_t)(len - len / 2);
		s2[1].lkey = 0;
		barrier();
		if (ibc_xport_write(w->x, right(), s2, 2, raddr_of(w, right(), 0),
				    w->rd[right()].rkey, IBC_XPORT_WR_SIGNALED | IBC_XPORT_WR_INLINE,
				    7) != IBC_OK)
			ok = 0;
		memset(stack, 0, sizeof(stack)); /* inline: the buffer is ours again */
		ok = ok && wait_ok(w->x, IBC_XPORT_CQ_SEND, 7, NULL);
		barrier();
		ok = ok && verify(w->A, len, seed_of(left(), 77, 1), 0) &&
		     all_bytes(w->A + len, GUARD, 0xEE);
		check(ok, "inline write of %zu B (2 sges, stack memory overwritten after post)", len);
	}
	/* ibc_xport_write_inline (shm: its store path), 1 .. max_inline bytes,
	 * unsignaled: each lands whole, before a later write of the same rank
	 * (a signaled flag write after it), guards untouched */
	if (c->max_inline == 0) {
		skip(1, "backend has no inline writes");
	} else {
		static const size_t lens[] = { 1, 8, 13, 40, 0 };
		unsigned char stack[2048], flag[8] = { 1 };
		int ok = 1;

		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]) && ok; k++) {
			size_t len = lens[k] ? lens[k] : c->max_inline, toff = 64 + 128 * k;
			struct ibc_xport_sge fs = { (uint64_t)(uintptr_t)flag, 8, 0 };

			if (len > c->max_inline || len > sizeof(stack) || toff + len + GUARD > 4096)
				continue;
			memset(w->A + toff - GUARD, 0xEE, len + 2 * GUARD);
			memset(w->A + 4096 - 8, 0, 8);
			fill(stack, len, seed_of(R, 78, (int)k), 0);
			barrier();
			ok = ibc_xport_write_inline(w->x, right(), stack, (uint32_t)len,
						    raddr_of(w, right(), toff), w->rd[right()].rkey,
						    9) == IBC_OK;
			memset(stack, 0, len);
			ok = ok && ibc_xport_write(w->x, right(), &fs, 1, raddr_of(w, right(), 4096 - 8),
						   w->rd[right()].rkey,
						   IBC_XPORT_WR_SIGNALED | IBC_XPORT_WR_INLINE, 10) == IBC_OK;
			ok = ok && wait_ok(w->x, IBC_XPORT_CQ_SEND, 10, NULL);
			ok = ok && ibc_xport_wait_u64(w->x, (const uint64_t *)(void *)(w->A + 4096 - 8), 1,
						      TMO_NS, NULL) == IBC_OK;
			ok = ok && verify(w->A + toff, len, seed_of(left(), 78, (int)k), 0) &&
			     all_bytes(w->A + toff - GUARD, GUARD, 0xEE) &&
			     all_bytes(w->A + toff + len, GUARD, 0xEE);
			barrier();
		}
		check(ok, "ibc_xport_write_inline of 1, 8, 13, 40 and %u B: each lands whole before "
		      "a later flag write, guards untouched", c->max_inline);
	}
}

/* writes and reads into plain malloc memory registered with mr_reg */
static void test_user_mem(struct world *w)
{
	const size_t len = 256 * 1024 + 3;
	unsigned char *ub = NULL;
	struct ibc_xport_mr *umr = NULL;
	struct ibc_xport_rdesc urd[MAXR];
	struct ibc_xport_sge s;
	int ok = 1, rc;

	if (!w->x->caps.user_mem) {
		skip(3, "backend cannot reach plain user memory remotely (caps.user_mem = 0)");
		return;
	}
	ub = malloc(len + 2 * GUARD);
	if (ub == NULL)
		fatal("out of memory");
	memset(ub, 0xEE, len + 2 * GUARD);
	rc = ibc_xport_mr_reg(w->x, ub + GUARD, len, IBC_XPORT_ACCESS_ALL, &umr);
	ok = rc == IBC_OK;
	if (ok)
		ok = ibc_xport_rdesc_allgather(w->x, &umr->rdesc, urd) == IBC_OK;
	if (!check(ok, "mr_reg of %zu B of malloc memory", len))
		fatal("mr_reg failed");
	fill(w->Bl, len, seed_of(R, 5, 5), 0);
	barrier();
	s = sge_of(w, w->Bl, len);
	ok = ibc_xport_write(w->x, right(), &s, 1, urd[right()].addr, urd[right()].rkey,
			     IBC_XPORT_WR_SIGNALED, 11) == IBC_OK &&
	     wait_ok(w->x, IBC_XPORT_CQ_SEND, 11, NULL);
	barrier();
	ok = ok && verify(ub + GUARD, len, seed_of(left(), 5, 5), 0) &&
	     all_bytes(ub, GUARD, 0xEE) && all_bytes(ub + GUARD + len, GUARD, 0xEE);
	check(ok, "write into a peer's plain user memory (%zu B)", len);
	/* read back what I wrote into my right's user memory */
	memset(w->Bl, 0, len);
	s = sge_of(w, w->Bl, len);
	ok = ibc_xport_read(w->x, right(), &s, 1, urd[right()].addr, urd[right()].rkey,
			    IBC_XPORT_WR_SIGNALED, 12) == IBC_OK &&
	     wait_ok(w->x, IBC_XPORT_CQ_SEND, 12, NULL);
	ok = ok && verify(w->Bl, len, seed_of(R, 5, 5), 0);
	check(ok, "read from a peer's plain user memory");
	barrier();
	rc = ibc_xport_mr_dereg(w->x, umr);
	check(rc == IBC_OK, "mr_dereg of user memory");
	free(ub);
}

static void test_read(struct world *w)
{
	static const int nsges[] = { 1, 4, 16 };
	struct ibc_xport_sge sge[IBC_XPORT_MAX_SGE];

	for (size_t si = 0; si < NSIZES; si += 2) {
		for (size_t gi = 0; gi < sizeof(nsges) / sizeof(nsges[0]); gi++) {
			size_t len = sizes[si], span, soff = 4096 + 11;
			int want = nsges[gi] > (int)w->x->caps.max_sge ? (int)w->x->caps.max_sge
								      : nsges[gi];
			int n, ok;

			if ((size_t)want > len)
				continue;
			fill(w->A + soff, len, seed_of(R, (int)si, 900 + want), 0);
			memset(w->Bl, 0xEE, len + 64 * IBC_XPORT_MAX_SGE + 64);
			n = build_sges(w, w->Bl, len, want, sge, &span);
			barrier();
			ok = ibc_xport_read(w->x, right(), sge, n, raddr_of(w, right(), soff),
					    w->rd[right()].rkey, IBC_XPORT_WR_SIGNALED, 200 + si) == IBC_OK &&
			     wait_ok(w->x, IBC_XPORT_CQ_SEND, 200 + si, NULL);
			{
				size_t pos = 0, prev_end = 0;
				for (int i = 0; i < n && ok; i++) {
					unsigned char *p = (unsigned char *)(uintptr_t)sge[i].addr;
					ok = verify(p, sge[i].len, seed_of(right(), (int)si, 900 + want), pos) &&
					     all_bytes(w->Bl + prev_end, (size_t)(p - w->Bl) - prev_end, 0xEE);
					pos += sge[i].len;
					prev_end = (size_t)(p - w->Bl) + sge[i].len;
				}
				ok = ok && all_bytes(w->Bl + prev_end, 32, 0xEE);
			}
			barrier();
			check(ok, "read %zu B scattered into %d sge(s): data right, gaps untouched", len, n);
		}
	}
}

static void test_write_imm(struct world *w)
{
	const size_t lens[] = { 1, 4096, 1 * MIB };
	for (size_t k = 0; k < 3; k++) {
		struct ibc_xport_wc wc;
		struct ibc_xport_sge s = sge_of(w, w->Bl, lens[k]);
		uint32_t imm = 0xC0DE0000u | (uint32_t)(R << 4) | (uint32_t)k;
		int ok, rc;

		rc = ibc_xport_recv(w->x, left(), NULL, NULL, 0, 300 + k);
		fill(w->Bl, lens[k], seed_of(R, 30, (int)k), 0);
		memset(w->A, 0, lens[k]);
		barrier();
		ok = rc == IBC_OK &&
		     ibc_xport_write_imm(w->x, right(), &s, 1, raddr_of(w, right(), 0),
					 w->rd[right()].rkey, imm, IBC_XPORT_WR_SIGNALED, 310 + k) == IBC_OK &&
		     wait_ok(w->x, IBC_XPORT_CQ_SEND, 310 + k, NULL);
		ok = ok && wait_ok(w->x, IBC_XPORT_CQ_RECV, 300 + k, &wc);
		ok = ok && wc.opcode == IBC_XPORT_OP_RECV_WRITE_IMM && (wc.flags & IBC_XPORT_WC_IMM) &&
		     wc.imm == (0xC0DE0000u | (uint32_t)(left() << 4) | (uint32_t)k) &&
		     wc.byte_len == lens[k] && (wc.peer == left() || wc.peer == -1);
		/* the data is there when the receive completes */
		ok = ok && verify(w->A, lens[k], seed_of(left(), 30, (int)k), 0);
		barrier();
		check(ok, "write with immediate %zu B: receive completion (opcode, imm, byte_len) "
		      "and data", lens[k]);
	}
}

/* ---------------------------------------------------------- two-sided -- */

#define NMSG 24
#define SLOT (64 * 1024)

static size_t msg_len(int i)
{
	static const size_t l[] = { 1, 7, 64, 100, 1000, 4096, 4097, 65536 };
	return l[i % 8];
}

static void test_send_recv(struct world *w)
{
	struct ibc_xport_wc wc;
	int ok = 1;

	/* receives for my left: 64 KiB slots in A, every fourth scattered over 2 sges */
	for (int i = 0; i < NMSG && ok; i++) {
		struct ibc_xport_sge rs[2];
		unsigned char *slot = w->A + (size_t)i * 2 * SLOT;
		int ns = 1;
		memset(slot, 0xEE, 2 * SLOT);
		rs[0] = sge_of(w, slot, SLOT);
		if (i % 4 == 3) {
			rs[0].len = 1000;
			rs[1] = sge_of(w, slot + 2000, SLOT);
			ns = 2;
		}
		ok = ibc_xport_recv(w->x, left(), NULL, rs, ns, 400 + (uint64_t)i) == IBC_OK;
	}
	check(ok, "post %d receives (some with 2 sges)", NMSG);
	barrier();
	ok = 1;
	for (int i = 0; i < NMSG && ok; i++) {
		struct ibc_xport_sge ss[3];
		size_t len = msg_len(i), span;
		int n = build_sges(w, w->Bl + (size_t)i * 2 * SLOT, len, 1 + i % 3, ss, &span);
		struct ibc_xport_wr wr = { .wr_id = 500 + (uint64_t)i, .flags = IBC_XPORT_WR_SIGNALED,
					   .peer = right(), .num_sge = n, .sge = ss };
		int posted;
		for (int k = 0, pos = 0; k < n; pos += (int)ss[k].len, k++)
			fill((unsigned char *)(uintptr_t)ss[k].addr, ss[k].len, seed_of(R, 40, i),
			     (size_t)pos);
		wr.opcode = i % 3 == 2 ? IBC_XPORT_OP_SEND_IMM : IBC_XPORT_OP_SEND;
		wr.imm = 0xABC00000u + (uint32_t)i;
		ok = ibc_xport_post(w->x, &wr, 1, &posted) == IBC_OK && posted == 1;
	}
	for (int i = 0; i < NMSG && ok; i++)
		ok = wait_ok(w->x, IBC_XPORT_CQ_SEND, 500 + (uint64_t)i, NULL);
	check(ok, "%d sends (gather of 1..3 sges, some with immediate) complete in order", NMSG);
	ok = 1;
	for (int i = 0; i < NMSG && ok; i++) {
		unsigned char *slot = w->A + (size_t)i * 2 * SLOT;
		size_t len = msg_len(i);
		ok = wait_ok(w->x, IBC_XPORT_CQ_RECV, 400 + (uint64_t)i, &wc) &&
		     wc.opcode == IBC_XPORT_OP_RECV && wc.byte_len == len &&
		     (wc.peer == left() || wc.peer == -1);
		if (ok && i % 3 == 2)
			ok = (wc.flags & IBC_XPORT_WC_IMM) && wc.imm == 0xABC00000u + (uint32_t)i;
		else if (ok)
			ok = !(wc.flags & IBC_XPORT_WC_IMM);
		if (ok && i % 4 == 3) {
			size_t a = len < 1000 ? len : 1000;
			ok = verify(slot, a, seed_of(left(), 40, i), 0) &&
			     (len <= 1000 || verify(slot + 2000, len - 1000, seed_of(left(), 40, i), 1000));
		} else if (ok) {
			ok = verify(slot, len, seed_of(left(), 40, i), 0) &&
			     all_bytes(slot + len, 16, 0xEE);
		}
		if (!ok)
			ibc_error("conformance: receive %d: wr %llu opcode %s len %u (want %zu) imm %#x",
				  i, (unsigned long long)wc.wr_id, ibc_xport_opcode_name(wc.opcode),
				  wc.byte_len, len, wc.imm);
	}
	check(ok, "%d receives: in order, byte_len, immediate flag, data (scattered too)", NMSG);
	barrier();

	/* the send comes before the receive is posted (RNR on verbs, a queued WR on shm) */
	{
		struct ibc_xport_sge s = sge_of(w, w->Bl, 512);
		struct ibc_xport_sge rs = sge_of(w, w->A, 4096);
		fill(w->Bl, 512, seed_of(R, 41, 0), 0);
		ok = ibc_xport_send(w->x, right(), &s, 1, IBC_XPORT_WR_SIGNALED, 600) == IBC_OK;
		barrier();
		memset(w->A, 0, 4096);
		ok = ok && ibc_xport_recv(w->x, left(), NULL, &rs, 1, 601) == IBC_OK;
		ok = ok && wait_ok(w->x, IBC_XPORT_CQ_SEND, 600, NULL);
		ok = ok && wait_ok(w->x, IBC_XPORT_CQ_RECV, 601, &wc) && wc.byte_len == 512 &&
		     verify(w->A, 512, seed_of(left(), 41, 0), 0);
		barrier();
		check(ok, "a send posted before its receive arrives once the receive is posted");
	}

	/* shared receive queue */
	if (!w->x->caps.srq) {
		skip(1, "backend has no shared receive queue (caps.srq = 0)");
	} else {
		struct ibc_xport_sge rs[4], s;
		int got = 0;
		ok = 1;
		for (int i = 0; i < 4 && ok; i++) {
			rs[i] = sge_of(w, w->A + (size_t)i * 4096, 4096);
			ok = ibc_xport_recv(w->x, IBC_XPORT_PEER_ANY, NULL, &rs[i], 1, 700 + (uint64_t)i) ==
			     IBC_OK;
		}
		barrier();
		s = sge_of(w, w->Bl, 128);
		fill(w->Bl, 128, seed_of(R, 42, 0), 0);
		for (int i = 0; i < 4 && ok; i++)
			ok = ibc_xport_send(w->x, right(), &s, 1, IBC_XPORT_WR_SIGNALED, 710 + (uint64_t)i) ==
				     IBC_OK &&
			     wait_ok(w->x, IBC_XPORT_CQ_SEND, 710 + (uint64_t)i, NULL);
		for (int i = 0; i < 4 && ok; i++) {
			ok = ibc_xport_cq_wait(w->x, IBC_XPORT_CQ_RECV, TMO_NS, &wc) == IBC_OK &&
			     wc.status == IBC_OK && wc.byte_len == 128 && wc.wr_id >= 700 && wc.wr_id < 704 &&
			     verify(w->A + (wc.wr_id - 700) * 4096, 128, seed_of(left(), 42, 0), 0);
			got += ok;
		}
		barrier();
		check(ok && got == 4, "shared receive queue (IBC_XPORT_PEER_ANY) takes sends");
	}
}

/* ---------------------------------------------------------- post list -- */

#define NLIST 16

static void list_build(struct world *w, struct ibc_xport_wr *wr, struct ibc_xport_sge *s)
{
	for (int k = 0; k < NLIST; k++) {
		size_t len = 1 + (size_t)k * 37;
		s[k] = sge_of(w, w->Bl + (size_t)k * 1024, len);
		memset(&wr[k], 0, sizeof(wr[k]));
		wr[k].wr_id = 800 + (uint64_t)k;
		wr[k].opcode = IBC_XPORT_OP_WRITE;
		wr[k].flags = k == NLIST - 1 || k == 5 ? IBC_XPORT_WR_SIGNALED : 0;
		wr[k].peer = right();
		wr[k].num_sge = 1;
		wr[k].sge = &s[k];
		wr[k].remote_addr = raddr_of(w, right(), (size_t)k * 4096);
		wr[k].rkey = w->rd[right()].rkey;
	}
}

static void test_post_list(struct world *w)
{
	struct ibc_xport_wr wr[NLIST];
	struct ibc_xport_sge s[NLIST];
	unsigned char *snap = malloc(NLIST * 4096);
	int ok, posted = 0;

	if (snap == NULL)
		fatal("out of memory");
	for (int variant = 0; variant < 2; variant++) {
		memset(w->A, 0xEE, NLIST * 4096);
		for (int k = 0; k < NLIST; k++)
			fill(w->Bl + (size_t)k * 1024, 1 + (size_t)k * 37, seed_of(R, 50, k), 0);
		list_build(w, wr, s);
		barrier();
		if (variant == 0) {
			ok = ibc_xport_post(w->x, wr, NLIST, &posted) == IBC_OK && posted == NLIST;
		} else {
			ok = 1;
			for (int k = 0; k < NLIST && ok; k++) {
				int p1 = 0;
				ok = ibc_xport_post(w->x, &wr[k], 1, &p1) == IBC_OK && p1 == 1;
			}
		}
		ok = ok && wait_ok(w->x, IBC_XPORT_CQ_SEND, 805, NULL) &&
		     wait_ok(w->x, IBC_XPORT_CQ_SEND, 800 + NLIST - 1, NULL);
		barrier();
		for (int k = 0; k < NLIST && ok; k++) {
			size_t len = 1 + (size_t)k * 37;
			ok = verify(w->A + (size_t)k * 4096, len, seed_of(left(), 50, k), 0) &&
			     all_bytes(w->A + (size_t)k * 4096 + len, 4096 - len, 0xEE);
		}
		if (variant == 0)
			memcpy(snap, w->A, NLIST * 4096);
		else
			ok = ok && memcmp(snap, w->A, NLIST * 4096) == 0;
		check(ok, "%s of %d writes (2 signaled): data right%s",
		      variant == 0 ? "one post list" : "single posts", NLIST,
		      variant == 0 ? "" : ", memory identical to the post list's");
	}
	free(snap);
	barrier();
}

/* ------------------------------------------------- send queue slots --- */

/* A send queue has caps.max_send_wr slots, given back only when a completion
 * of the queue is polled (xport.h: at least one WR in every max_send_wr must
 * be signaled).  Every rank fills its queue to its right neighbour with
 * max_send_wr - 1 unsignaled writes and one signaled: one more post is
 * refused with IBC_ERR_AGAIN, and once the signaled completion is polled the
 * queue takes posts again (shm keeps the slots as verbs does, so code that
 * never signals stops on shm too). */
static void test_sq_slots(struct world *w)
{
	uint32_t depth = w->x->caps.max_send_wr, k;
	struct ibc_xport_sge s = sge_of(w, w->Bl, 8);
	struct ibc_xport_wr wr;
	int ok = 1, posted, rc_full, rc_after = IBC_ERR_INVAL;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBC_XPORT_OP_WRITE;
	wr.peer = right();
	wr.num_sge = 1;
	wr.sge = &s;
	wr.remote_addr = raddr_of(w, right(), 0);
	wr.rkey = w->rd[right()].rkey;
	barrier();
	for (k = 0; k < depth && ok; k++) {
		posted = 0;
		wr.wr_id = 900 + k;
		wr.flags = k == depth - 1 ? IBC_XPORT_WR_SIGNALED : 0;
		ok = ibc_xport_post(w->x, &wr, 1, &posted) == IBC_OK && posted == 1;
	}
	check(ok, "%u writes fill the send queue (%u unsignaled, the last signaled)", depth, depth - 1);
	wr.wr_id = 1900;
	wr.flags = IBC_XPORT_WR_SIGNALED;
	posted = 0;
	rc_full = ibc_xport_post(w->x, &wr, 1, &posted);
	check(rc_full == IBC_ERR_AGAIN && posted == 0,
	      "one more post to the full queue is refused with again (got %s)", ibc_status_str(rc_full));
	if (wait_ok(w->x, IBC_XPORT_CQ_SEND, 900 + depth - 1, NULL)) {
		posted = 0;
		rc_after = ibc_xport_post(w->x, &wr, 1, &posted);
		if (rc_after == IBC_OK && !wait_ok(w->x, IBC_XPORT_CQ_SEND, 1900, NULL))
			rc_after = IBC_ERR_TIMEOUT;
	}
	check(rc_after == IBC_OK, "after the signaled completion is polled the queue takes posts again "
	      "(got %s)", ibc_status_str(rc_after));
	barrier();
}

/* ---------------------------------------------------------- ordering --- */

static void test_ordering(struct world *w)
{
	long iters = 1000;
	const char *e = getenv("IBC_TEST_ORDER_ITERS");
	const size_t FLAG = 5 * MIB, ACK = 5 * MIB + 64, PAY = 0;
	uint64_t *flag = (uint64_t *)(void *)(w->A + FLAG);
	uint64_t *ack = (uint64_t *)(void *)(w->A + ACK);
	uint64_t *src_flag = (uint64_t *)(void *)(w->Bl + FLAG);
	uint64_t *src_ack = (uint64_t *)(void *)(w->Bl + ACK);
	int ok = 1, bad_payload = 0, unsignaled = 0;
	long i;

	if (!is_shm)
		iters = 300;
	if (e != NULL && atol(e) > 0)
		iters = atol(e);
	*flag = 0;
	*ack = 0;
	barrier();
	for (i = 1; i <= iters && ok; i++) {
		size_t len = i % 50 == 0 ? 256 * 1024 : 8 + (size_t)(i * 97) % 4096;
		struct ibc_xport_sge ps = sge_of(w, w->Bl + PAY, len);
		struct ibc_xport_sge fs = sge_of(w, (unsigned char *)src_flag, 8);
		struct ibc_xport_sge as = sge_of(w, (unsigned char *)src_ack, 8);
		struct ibc_xport_wr wr[2];
		unsigned fl_sig = (i % 16 == 0) ? IBC_XPORT_WR_SIGNALED : 0;
		uint64_t seen;
		int posted;

		/* writer: payload, then flag, as two separate WRs */
		fill(w->Bl + PAY, len, (uint32_t)(R * 100003 + i), 0);
		*src_flag = (uint64_t)i;
		memset(wr, 0, sizeof(wr));
		wr[0].opcode = IBC_XPORT_OP_WRITE;
		wr[0].peer = right();
		wr[0].num_sge = 1;
		wr[0].sge = &ps;
		wr[0].remote_addr = raddr_of(w, right(), PAY);
		wr[0].rkey = w->rd[right()].rkey;
		wr[1] = wr[0];
		wr[1].sge = &fs;
		wr[1].remote_addr = raddr_of(w, right(), FLAG);
		wr[1].flags = fl_sig;
		wr[1].wr_id = (uint64_t)i;
		ok = ibc_xport_post(w->x, &wr[0], 1, &posted) == IBC_OK &&
		     ibc_xport_post(w->x, &wr[1], 1, &posted) == IBC_OK;
		/* reader: flag from my left, then its payload */
		ok = ok && ibc_xport_wait_u64(w->x, flag, (uint64_t)i, TMO_NS, &seen) == IBC_OK;
		if (ok && !verify(w->A + PAY, len, (uint32_t)(left() * 100003 + i), 0))
			bad_payload++;
		*src_ack = (uint64_t)i;
		ok = ok && ibc_xport_write(w->x, left(), &as, 1, raddr_of(w, left(), ACK),
					   w->rd[left()].rkey, fl_sig, 0xACC) == IBC_OK;
		/* writer: wait for the ack before touching the source buffers again */
		ok = ok && ibc_xport_wait_u64(w->x, ack, (uint64_t)i, TMO_NS, &seen) == IBC_OK;
		if (fl_sig) {
			/* reap the two signaled completions (flag, ack) */
			struct ibc_xport_wc wc;
			for (int k = 0; k < 2 && ok; k++)
				ok = ibc_xport_cq_wait(w->x, IBC_XPORT_CQ_SEND, TMO_NS, &wc) == IBC_OK &&
				     wc.status == IBC_OK;
		} else {
			unsignaled++;
		}
	}
	barrier();
	check(ok, "ordering: %ld rounds of payload write + flag write + ack ran", iters);
	check(bad_payload == 0, "ordering: the payload is complete whenever the flag is seen "
	      "(%d bad of %ld)", bad_payload, iters);
	(void)unsignaled;
}

/* ---------------------------------------------------------- atomics ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_atomics(struct world *w)
{
	const int K = 200, K2 = 100;
	uint64_t *olds = calloc((size_t)K, sizeof(*olds));
	uint64_t *all = calloc((size_t)K * (size_t)N, sizeof(*all));
	uint64_t *res = (uint64_t *)(void *)(w->Bl + 64);
	struct ibc_xport_sge rs = sge_of(w, (unsigned char *)res, 8);
	uint64_t *w0 = (uint64_t *)(void *)w->A, *w1 = (uint64_t *)(void *)(w->A + 8);
	int ok = 1, initiator = R != 0;

	if (olds == NULL || all == NULL)
		fatal("out of memory");
	if (!w->x->caps.atomics) {
		skip(4, "backend has no atomics (caps.atomics = 0)");
		free(olds);
		free(all);
		return;
	}
	*w0 = 0;
	*w1 = 0;
	barrier();
	for (int k = 0; k < K && ok && initiator; k++) {
		ok = ibc_xport_fadd(w->x, 0, &rs, raddr_of(w, 0, 0), w->rd[0].rkey, 1,
				    IBC_XPORT_WR_SIGNALED, 900) == IBC_OK &&
		     wait_ok(w->x, IBC_XPORT_CQ_SEND, 900, NULL);
		olds[k] = *res;
	}
	check(ok, "fetch-add: %d x %d contending fetch-adds complete", N - 1, K);
	if (ibc_boot_gather(B, olds, all, (size_t)K * sizeof(*olds), 0) != IBC_OK)
		fatal("gather failed");
	barrier();
	if (R == 0) {
		qsort(all + K, (size_t)K * (size_t)(N - 1), sizeof(*all), cmp_u64);
		for (size_t i = 0; i < (size_t)K * (size_t)(N - 1) && ok; i++)
			ok = all[K + i] == i;
		ok = ok && *w0 == (uint64_t)K * (uint64_t)(N - 1);
	}
	check(ok, "fetch-add: final value %d and every fetched value distinct (0..final-1)",
	      K * (N - 1));
	/* compare-swap increment loops */
	ok = 1;
	for (int k = 0; k < K2 && ok && initiator; k++) {
		uint64_t guess = 0;
		int tries = 0;
		for (;;) {
			ok = ibc_xport_cswap(w->x, 0, &rs, raddr_of(w, 0, 8), w->rd[0].rkey, guess,
					     guess + 1, IBC_XPORT_WR_SIGNALED, 901) == IBC_OK &&
			     wait_ok(w->x, IBC_XPORT_CQ_SEND, 901, NULL);
			if (!ok || *res == guess)
				break;
			guess = *res;
			if (++tries > 100000) {
				ok = 0;
				break;
			}
		}
	}
	check(ok, "compare-swap: %d x %d increment loops complete", N - 1, K2);
	barrier();
	check(R != 0 || *w1 == (uint64_t)K2 * (uint64_t)(N - 1),
	      "compare-swap: final value %d", K2 * (N - 1));
	free(olds);
	free(all);
}

#endif
