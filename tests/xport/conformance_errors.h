/* Conformance: error completions (each on a fresh instance), refused
 * arguments, the wait primitive, XRC and the names in /dev/shm.  Part of
 * conformance.c. */
#ifndef IBC_TESTS_XPORT_CONFORMANCE_ERRORS_H
#define IBC_TESTS_XPORT_CONFORMANCE_ERRORS_H

#include "conformance.h"

/* ---------------------------------------------------------- errors ----- */

enum ecase { E_BAD_RKEY, E_RANGE_END, E_RANGE_BEFORE, E_DEREG, E_READ_BAD_RKEY,
	     E_UNSIGNALED, E_LOCAL_PROT, E_RECV_SMALL, E_ATOMIC_RANGE, E_INLINE_BAD_RKEY,
	     E_INLINE_RANGE, E_INLINE_DEREG, E_COUNT };
static const char *const ecase_name[E_COUNT] = {
	"write with a bad rkey", "write past the end of the region",
	"write before the start of the region", "write to deregistered memory",
	"read with a bad rkey", "unsignaled write with a bad rkey",
	"write from an unregistered local buffer (bad lkey)",
	"send larger than the receive buffer", "fetch-add outside the region",
	"ibc_xport_write_inline with a bad rkey", "ibc_xport_write_inline past the end",
	"ibc_xport_write_inline to deregistered memory",
};

/* the cases posted by ibc_xport_write_inline (16 bytes, unsignaled: an
 * error completes anyway) */
static int ecase_inline(enum ecase c)
{
	return c == E_INLINE_BAD_RKEY || c == E_INLINE_RANGE || c == E_INLINE_DEREG;
}

/* warm: rank 0 first writes the target's region with its key (the same
 * bytes it holds), as a warm-up that fills the transport's caches; warm 2:
 * then a second region of the target's too, so that the first key's cache
 * entry is not the latest one (shm keeps several a peer) */
static void error_case(enum ecase c, int warm)
{
	struct ibc_xport_params p;
	struct ibc_xport *x;
	struct ibc_xport_mr *mr = NULL, *mr2 = NULL;
	struct ibc_xport_rdesc rd[MAXR], rd2[MAXR];
	struct ibc_xport_wc wc;
	const size_t LEN = 64 * 1024;
	int ok = 1, rc, got_err = 0, recv_err = 1;
	const char *reason = "";

	params_default(&p);
	x = open_x(&p);
	rc = ibc_xport_mr_alloc(x, LEN, IBC_XPORT_ACCESS_ALL, &mr);
	if (rc != IBC_OK || ibc_xport_rdesc_allgather(x, &mr->rdesc, rd) != IBC_OK)
		fatal("error case setup failed");
	if (warm == 2 && (ibc_xport_mr_alloc(x, LEN, IBC_XPORT_ACCESS_ALL, &mr2) != IBC_OK ||
			  ibc_xport_rdesc_allgather(x, &mr2->rdesc, rd2) != IBC_OK))
		fatal("error case setup failed");
	memset(mr->addr, 0x5A, LEN);
	if (warm) {
		if (R == 0) {
			struct ibc_xport_sge g = { (uint64_t)(uintptr_t)mr->addr, 64, mr->lkey };

			ok = ibc_xport_write(x, 1, &g, 1, rd[1].addr + 64, rd[1].rkey,
					     IBC_XPORT_WR_SIGNALED, 7) == IBC_OK &&
			     wait_ok(x, IBC_XPORT_CQ_SEND, 7, NULL);
			if (ok && warm == 2)
				ok = ibc_xport_write(x, 1, &g, 1, rd2[1].addr + 64, rd2[1].rkey,
						     IBC_XPORT_WR_SIGNALED, 8) == IBC_OK &&
				     wait_ok(x, IBC_XPORT_CQ_SEND, 8, NULL);
		}
		barrier();
	}
	if (c == E_RECV_SMALL && R == 1) {
		struct ibc_xport_sge s = { (uint64_t)(uintptr_t)mr->addr, 16, mr->lkey };
		ok = ibc_xport_recv(x, 0, NULL, &s, 1, 77) == IBC_OK;
	}
	if ((c == E_DEREG || c == E_INLINE_DEREG) && R == 1) {
		ok = ibc_xport_mr_dereg(x, mr) == IBC_OK;
		mr = NULL;
	}
	barrier();
	if (R == 0 && (c != E_ATOMIC_RANGE || x->caps.atomics)) {
		unsigned char *lb = (unsigned char *)mr->addr + LEN / 2;
		static unsigned char unreg[128];
		struct ibc_xport_sge s = { (uint64_t)(uintptr_t)lb, 64, mr->lkey };
		struct ibc_xport_wr wr = { .wr_id = 4242, .opcode = IBC_XPORT_OP_WRITE,
					   .flags = IBC_XPORT_WR_SIGNALED, .peer = 1, .num_sge = 1,
					   .sge = &s, .remote_addr = rd[1].addr, .rkey = rd[1].rkey };
		int posted;
		memset(lb, 0xA5, 64);
		switch (c) {
		case E_BAD_RKEY:
			wr.rkey = rd[1].rkey ^ 0x5a5a5a5au;
			break;
		case E_RANGE_END:
			wr.remote_addr = rd[1].addr + LEN - 32;
			break;
		case E_RANGE_BEFORE:
			wr.remote_addr = rd[1].addr - 64;
			break;
		case E_DEREG:
			break;
		case E_READ_BAD_RKEY:
			wr.opcode = IBC_XPORT_OP_READ;
			wr.rkey = rd[1].rkey ^ 0x00a5a500u;
			break;
		case E_UNSIGNALED:
			wr.flags = 0;
			wr.rkey = rd[1].rkey + 0x10000u;
			break;
		case E_LOCAL_PROT:
			s.addr = (uint64_t)(uintptr_t)unreg;
			s.lkey = mr->lkey ^ 0x33333300u;
			break;
		case E_RECV_SMALL:
			wr.opcode = IBC_XPORT_OP_SEND;
			break;
		case E_ATOMIC_RANGE:
			wr.opcode = IBC_XPORT_OP_FETCH_ADD;
			s.len = 8;
			wr.remote_addr = rd[1].addr + LEN;
			wr.compare_add = 1;
			break;
		case E_INLINE_BAD_RKEY:
			wr.rkey = rd[1].rkey ^ 0x5a5a5a5au;
			break;
		case E_INLINE_RANGE:
			wr.remote_addr = rd[1].addr + LEN - 8;
			break;
		case E_INLINE_DEREG:
		case E_COUNT:
			break;
		}
		if (ecase_inline(c))
			ok = ibc_xport_write_inline(x, 1, lb, 16, wr.remote_addr, wr.rkey,
						    wr.wr_id) == IBC_OK;
		else
			ok = ibc_xport_post(x, &wr, 1, &posted) == IBC_OK;
		rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_SEND, TMO_NS, &wc);
		got_err = ok && rc == IBC_OK && wc.wr_id == 4242 && wc.status != IBC_OK &&
			  wc.reason != NULL && wc.reason[0] != '\0';
		if (rc == IBC_OK && wc.reason != NULL)
			reason = wc.reason;
		if (!got_err)
			ibc_error("conformance: %s: post ok %d, wait %s, wr %llu status %d", ecase_name[c],
				  ok, ibc_status_str(rc), (unsigned long long)wc.wr_id, wc.status);
	} else {
		got_err = 1;
	}
	if (c == E_RECV_SMALL && R == 1) {
		rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_RECV, TMO_NS, &wc);
		recv_err = rc == IBC_OK && wc.wr_id == 77 && wc.status != IBC_OK;
	}
	barrier();
	/* the target's memory is untouched (except the receive buffer case) */
	if (R == 1 && mr != NULL && c != E_RECV_SMALL)
		ok = ok && all_bytes(mr->addr, LEN, 0x5A);
	if (R == 0 && c == E_ATOMIC_RANGE && !x->caps.atomics)
		reason = "(skipped: no atomics)";
	{
		char rs[96];
		snprintf(rs, sizeof(rs), "%s", reason);
		if (ibc_boot_bcast(B, rs, sizeof(rs), 0) != IBC_OK)
			fatal("bootstrap failed");
		check(ok && got_err && recv_err, "error completion%s: %s -> \"%s\"%s",
		      warm == 2 ? " after good writes to it and to another region" :
		      warm ? " after a good write" : "", ecase_name[c], rs,
		      c == E_RECV_SMALL ? " (and an error receive completion)" :
		      c == E_DEREG || c == E_INLINE_DEREG || c == E_LOCAL_PROT ? ""
									 : ", target untouched");
	}
	if (mr != NULL)
		ibc_xport_mr_dereg(x, mr);
	if (mr2 != NULL)
		ibc_xport_mr_dereg(x, mr2);
	rc = ibc_xport_close(x);
	check(rc == IBC_OK, "close after an error (%s)", ibc_status_str(rc));
}

/* ---------------------------------------------------------- arguments -- */

/* malformed work requests are refused at post time with IBC_ERR_INVAL and
 * *posted = the index of the bad one (the WRs before it are posted, as in verbs) */
static void test_args(struct world *w)
{
	struct ibc_xport_sge s = sge_of(w, w->Bl, 64), many[IBC_XPORT_MAX_SGE + 1];
	struct ibc_xport_wr wr[2];
	struct ibc_xport_params p;
	struct ibc_xport *bad = NULL;
	int posted = -1, ok;

	memset(wr, 0, sizeof(wr));
	wr[0].opcode = IBC_XPORT_OP_WRITE;
	wr[0].peer = right();
	wr[0].num_sge = 1;
	wr[0].sge = &s;
	wr[0].remote_addr = raddr_of(w, right(), 0);
	wr[0].rkey = w->rd[right()].rkey;
	wr[1] = wr[0];
	wr[1].peer = N + 3;
	ok = ibc_xport_post(w->x, wr, 2, &posted) == IBC_ERR_INVAL && posted == 1;
	{
		struct ibc_xport_wc wc;
		int n = -1;
		/* wr[0] was unsignaled and fine: no completion */
		ok = ok && ibc_xport_cq_poll(w->x, IBC_XPORT_CQ_SEND, 1, &wc, &n) == IBC_OK && n == 0;
	}
	check(ok, "post list with a bad peer in position 1: INVAL, posted = 1");
	for (int i = 0; i <= IBC_XPORT_MAX_SGE; i++)
		many[i] = sge_of(w, w->Bl + i * 16, 8);
	wr[1] = wr[0];
	wr[1].num_sge = (int)w->x->caps.max_sge + 1;
	wr[1].sge = many;
	ok = ibc_xport_post(w->x, &wr[1], 1, &posted) == IBC_ERR_INVAL && posted == 0;
	wr[1] = wr[0];
	wr[1].flags = IBC_XPORT_WR_INLINE;
	s.len = w->x->caps.max_inline + 1;
	ok = ok && ibc_xport_post(w->x, &wr[1], 1, &posted) == IBC_ERR_INVAL && posted == 0;
	check(ok, "too many sges, inline payload over max_inline: INVAL");
	params_default(&p);
	p.backend = "no-such-backend";
	ok = ibc_xport_open(B, &p, &bad) == IBC_ERR_INVAL && bad == NULL;
	check(ok, "open of an unknown backend: INVAL");
	barrier();
}

/* ---------------------------------------------------------- misc ------- */

static void test_wait(struct world *w)
{
	uint64_t *word = (uint64_t *)(void *)(w->A + 6 * MIB), seen = 1;
	int rc;

	*word = 5;
	rc = ibc_xport_wait_u64(w->x, word, 6, 2000000, &seen);
	check(rc == IBC_ERR_TIMEOUT && seen == 5, "wait_u64 times out on an unreached target "
	      "(%s, saw %llu)", ibc_status_str(rc), (unsigned long long)seen);
	rc = ibc_xport_wait_u64(w->x, word, 5, 0, &seen);
	check(rc == IBC_OK && seen == 5, "wait_u64 returns at once when the value is reached");
	rc = ibc_xport_spin_u64(w->x, word, 6, 2000000);
	check(rc == IBC_ERR_TIMEOUT, "spin_u64 times out on an unreached target (%s)",
	      ibc_status_str(rc));
	rc = ibc_xport_spin_u64(w->x, word, 5, 0);
	check(rc == IBC_OK, "spin_u64 returns at once when the value is reached");
	check(w->x->caps.write_needs_cpu == (strcmp(w->x->caps.backend, "verbs") == 0),
	      "write_needs_cpu: set on verbs (rxe's kernel path), not on shm (%d)",
	      w->x->caps.write_needs_cpu);
}

static void test_xrc(void)
{
	struct ibc_xport_params p;
	struct ibc_xport *x = NULL;
	int rc, all[MAXR], unsup = 0;

	params_default(&p);
	p.conn = IBC_XPORT_CONN_XRC;
	rc = ibc_xport_open(B, &p, &x);
	if (rc == IBC_OK) {
		rc = ibc_xport_connect(x, NULL);
		if (rc != IBC_OK) {
			ibc_xport_close(x);
			x = NULL;
		}
	}
	if (ibc_boot_allgather(B, &rc, all, sizeof(rc)) != IBC_OK)
		fatal("bootstrap failed");
	for (int r = 0; r < N; r++)
		if (all[r] == IBC_ERR_UNSUPPORTED)
			unsup = 1;
	if (unsup) {
		char why[256];
		snprintf(why, sizeof(why), "%s", ibc_xport_unsupported_reason());
		if (ibc_boot_bcast(B, why, sizeof(why), 0) != IBC_OK)
			fatal("bootstrap failed");
		if (x != NULL)
			ibc_xport_close(x);
		skip(2, "XRC not supported here: %s", why[0] ? why : backend);
		return;
	}
	if (!check(rc == IBC_OK, "XRC open + connect (%s)", ibc_status_str(rc))) {
		skip(1, "XRC failed to open");
		return;
	}
	{
		struct ibc_xport_mr *mr = NULL;
		struct ibc_xport_rdesc rd[MAXR];
		int ok = ibc_xport_mr_alloc(x, 4096, IBC_XPORT_ACCESS_ALL, &mr) == IBC_OK &&
			 ibc_xport_rdesc_allgather(x, &mr->rdesc, rd) == IBC_OK;
		unsigned char *m = mr != NULL ? mr->addr : NULL;
		if (ok) {
			struct ibc_xport_sge s = { (uint64_t)(uintptr_t)(m + 2048), 256, mr->lkey };
			fill(m + 2048, 256, seed_of(R, 60, 0), 0);
			barrier();
			ok = ibc_xport_write(x, right(), &s, 1, rd[right()].addr, rd[right()].rkey,
					     IBC_XPORT_WR_SIGNALED, 61) == IBC_OK &&
			     wait_ok(x, IBC_XPORT_CQ_SEND, 61, NULL);
			barrier();
			ok = ok && verify(m, 256, seed_of(left(), 60, 0), 0);
		} else {
			barrier();
			barrier();
		}
		check(ok, "XRC write to the next rank");
		if (mr != NULL)
			ibc_xport_mr_dereg(x, mr);
		ibc_xport_close(x);
	}
}

static void test_no_names_while_running(struct world *w)
{
	if (!is_shm) {
		skip(1, "/dev/shm names are a shm matter");
		return;
	}
	if (!w->x->caps.user_mem) {
		skip(1, "shm without /proc/<pid>/fd access keeps names until close");
		return;
	}
	check(R != 0 || count_shm_leftovers() == 0,
	      "shm: no segment names in /dev/shm while running (a crash leaves nothing)");
}

#endif
