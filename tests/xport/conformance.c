/* Transport conformance suite, one for every backend: IBC_TEST_XPORT=shm|verbs|auto
 * (default shm).  Ranks come from the fork bootstrap (IBC_TEST_RANKS, default 8 on shm
 * and 4 elsewhere, at least 2); IBC_TEST_ORDER_ITERS sets the ordering rounds (default
 * 1000 on shm, 300 elsewhere).  Every check is evaluated on every rank; the verdicts are gathered to
 * rank 0, which alone prints TAP (with the failing ranks as diagnostics).
 *
 * Covered: caps, registration and descriptors, RDMA write with gather lists of
 * 1..16 sges and 1 B..4 MiB (inline and not, patterns that expose segment
 * boundaries, guard bytes around the target range), writes into plain user memory,
 * RDMA read with scatter lists, write-with-immediate, send/recv (gather, scatter,
 * immediate, receive posted late, shared receive queue), post list vs single post,
 * ordering (payload then flag, the reader checks the payload after the flag),
 * atomics under contention (fetch-add: final value and uniqueness of the fetched
 * values; compare-swap loops), multicast to 2..N members (exact delivery on shm,
 * integrity everywhere; injected drops on shm), error completions (bad rkey,
 * out of range, deregistered memory, unsignaled errors, local protection, receive
 * too small, the target untouched), the wait primitive, XRC (skipped where
 * unsupported), clean teardown and no /dev/shm leftovers.
 * Each error case runs on a fresh instance: on verbs an error breaks the QP. */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "xport/xport.h"
#include "tap.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXR 64
#define MIB (1024 * 1024)
#define AREA (8 * MIB)          /* A: remote target area; B: local area */
#define BIG_LEN (2 * AREA)
#define TMO_NS (10LL * 1000 * 1000 * 1000)
#define GUARD 64

static struct ibc_boot *B;
static int R, N;                 /* rank, size */
static const char *backend;      /* as asked */
static int is_shm;
static pid_t root_pid;

/* ------------------------------------------------------------- checks --- */

static void fatal(const char *why)
{
	if (R == 0)
		tap_bail_out("%s", why);
	ibc_boot_abort(B, 1, why);
	exit(1);
}

/* Collective: ok from every rank; rank 0 prints one TAP line. */
static int check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check(int ok, const char *fmt, ...)
{
	int mine = ok ? 1 : 0, all[MAXR], res = 1, bad = 0;
	char desc[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	if (ibc_boot_allgather(B, &mine, all, sizeof(mine)) != IBC_OK)
		fatal("bootstrap allgather failed (a rank died?)");
	for (int r = 0; r < N; r++)
		if (!all[r]) {
			res = 0;
			bad++;
		}
	if (R == 0) {
		tap_ok(res, "%s", desc);
		if (!res) {
			char list[256] = "";
			size_t used = 0;
			for (int r = 0; r < N && used < sizeof(list) - 8; r++)
				if (!all[r])
					used += (size_t)snprintf(list + used, sizeof(list) - used, " %d", r);
			tap_diag("failed on %d rank(s):%s", bad, list);
		}
	}
	return res;
}

static void skip(int n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void skip(int n, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (R == 0)
		tap_skip(n, "%s", why);
}

static void barrier(void)
{
	if (ibc_boot_barrier(B) != IBC_OK)
		fatal("bootstrap barrier failed (a rank died?)");
}

/* ------------------------------------------------------------- helpers -- */

static unsigned char pat(uint32_t seed, size_t off)
{
	return (unsigned char)(off * 131u + (off >> 8) * 7u + seed * 29u + 1u);
}

static void fill(unsigned char *p, size_t len, uint32_t seed, size_t base)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(seed, base + i);
}

static int verify(const unsigned char *p, size_t len, uint32_t seed, size_t base)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(seed, base + i))
			return 0;
	return 1;
}

static int all_bytes(const unsigned char *p, size_t len, unsigned char v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static uint32_t seed_of(int rank, int a, int b)
{
	return (uint32_t)(rank * 7919 + a * 131 + b * 17 + 3);
}

static int left(void)
{
	return (R + N - 1) % N;
}

static int right(void)
{
	return (R + 1) % N;
}

static void params_default(struct ibc_xport_params *p)
{
	ibc_xport_params_init(p);
	p->backend = backend;
	p->wait = IBC_WAIT_SPIN_YIELD; /* ranks outnumber cores */
}

static struct ibc_xport *open_x(const struct ibc_xport_params *p)
{
	struct ibc_xport *x = NULL;
	int rc = ibc_xport_open(B, p, &x);

	if (!check(rc == IBC_OK, "open %s transport (%s)", p->backend, ibc_status_str(rc)))
		fatal("cannot open the transport");
	rc = ibc_xport_connect(x, NULL);
	if (!check(rc == IBC_OK, "connect every peer (%s)", ibc_status_str(rc)))
		fatal("cannot connect");
	return x;
}

/* Waits for the next completion on cq; ok when it is wr_id with status IBC_OK. */
static int wait_ok(struct ibc_xport *x, int cq, uint64_t wr_id, struct ibc_xport_wc *out)
{
	struct ibc_xport_wc wc;
	int rc = ibc_xport_cq_wait(x, cq, TMO_NS, &wc);

	if (out != NULL)
		*out = wc;
	if (rc != IBC_OK) {
		ibc_error("conformance: no completion for wr %llu: %s", (unsigned long long)wr_id,
			  ibc_status_str(rc));
		return 0;
	}
	if (wc.wr_id != wr_id || wc.status != IBC_OK) {
		ibc_error("conformance: completion wr %llu status %d (%s), wanted wr %llu ok",
			  (unsigned long long)wc.wr_id, wc.status, wc.reason ? wc.reason : "?",
			  (unsigned long long)wr_id);
		return 0;
	}
	return 1;
}

/* Drains whatever is on cq within a short time; returns how many. */
static int drain(struct ibc_xport *x, int cq, struct ibc_xport_wc *wc, int max, int64_t quiet_ns)
{
	int got = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < max) {
		int n = 0;
		if (ibc_xport_cq_poll(x, cq, max - got, wc + got, &n) != IBC_OK)
			break;
		got += n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (n > 0)
			t0 = t;
		else if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) > quiet_ns)
			break;
		else
			sched_yield();
	}
	return got;
}

static int count_shm_leftovers(void)
{
	char want[64];
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	snprintf(want, sizeof(want), "ibcx-%d-", (int)root_pid);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, want, strlen(want)) == 0)
			n++;
	closedir(d);
	return n;
}

/* ---------------------------------------------------------- the world --- */

struct world {
	struct ibc_xport *x;
	struct ibc_xport_mr *big;
	unsigned char *A, *Bl;                  /* the two halves of big */
	struct ibc_xport_rdesc rd[MAXR];        /* every rank's big */
};

static uint64_t raddr_of(struct world *w, int peer, size_t off)
{
	return w->rd[peer].addr + off;
}

static struct ibc_xport_sge sge_of(struct world *w, const unsigned char *p, size_t len)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)p, (uint32_t)len, w->big->lkey };
	return s;
}

static void world_open(struct world *w)
{
	struct ibc_xport_params p;
	int rc;

	memset(w, 0, sizeof(*w));
	params_default(&p);
	w->x = open_x(&p);
	rc = ibc_xport_mr_alloc(w->x, BIG_LEN, IBC_XPORT_ACCESS_ALL, &w->big);
	if (!check(rc == IBC_OK, "mr_alloc of %d MiB (%s)", BIG_LEN / MIB, ibc_status_str(rc)))
		fatal("cannot register memory");
	w->A = w->big->addr;
	w->Bl = w->A + AREA;
	rc = ibc_xport_rdesc_allgather(w->x, &w->big->rdesc, w->rd);
	{
		int ok = rc == IBC_OK && all_bytes(w->A, 4096, 0);
		for (int r = 0; r < N && ok; r++)
			ok = w->rd[r].len == BIG_LEN && (int)w->rd[r].rank == r;
		ok = ok && w->rd[R].addr == (uint64_t)(uintptr_t)w->A && w->rd[R].rkey == w->big->rkey;
		check(ok, "remote descriptors exchanged (zeroed memory, len, rank, addr, rkey)");
	}
}

static void world_close(struct world *w)
{
	int rc = ibc_xport_mr_dereg(w->x, w->big);
	struct ibc_xport_stats s;

	ibc_xport_stats_get(w->x, &s);
	check(rc == IBC_OK && s.mrs == 0, "mr_dereg (%s), no registration left (%llu)",
	      ibc_status_str(rc), (unsigned long long)s.mrs);
	rc = ibc_xport_close(w->x);
	check(rc == IBC_OK, "close (%s)", ibc_status_str(rc));
}

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

/* ---------------------------------------------------------- multicast -- */

struct dgram {
	uint32_t magic, k, j, sender;
};

static size_t dgram_len(int j, uint32_t mtu)
{
	size_t cap = mtu < 1024 ? mtu : 1024;
	return sizeof(struct dgram) + (size_t)(j * 61) % (cap - sizeof(struct dgram) + 1);
}

/* root sends D datagrams to members [0, k); returns per-rank received count in *got. */
static int mcast_round(struct world *w, struct ibc_xport *x, struct ibc_xport_mr *mr,
		       unsigned char *buf, const char *gname, int k, int root, int D, int *got,
		       int *corrupt, uint64_t *gdropped)
{
	struct ibc_xport_mcast *g = NULL;
	int member = R < k, ok = 1;
	uint32_t mtu;
	char *seen = calloc((size_t)D, 1);
	struct ibc_xport_wc *wc = calloc((size_t)D + 8, sizeof(*wc));

	(void)w;
	*got = 0;
	*corrupt = 0;
	if (seen == NULL || wc == NULL)
		fatal("out of memory");
	if (member)
		ok = ibc_xport_mcast_join(x, gname, 0, &g) == IBC_OK;
	mtu = g != NULL ? g->mtu : x->caps.mcast_mtu;
	for (int j = 0; member && ok && j < D + 4; j++) {
		struct ibc_xport_sge s = { (uint64_t)(uintptr_t)(buf + (size_t)j * 2048), 2048,
					   mr->lkey };
		ok = ibc_xport_recv(x, -1, g, &s, 1, 1000 + (uint64_t)j) == IBC_OK;
	}
	barrier();
	if (R == root && ok) {
		unsigned char *sb = buf + (size_t)(D + 8) * 2048;
		for (int j = 0; j < D && ok; j++) {
			size_t len = dgram_len(j, mtu);
			struct dgram h = { 0x1bc0ffee, (uint32_t)k, (uint32_t)j, (uint32_t)R };
			struct ibc_xport_sge s = { (uint64_t)(uintptr_t)sb, (uint32_t)len, mr->lkey };
			memcpy(sb, &h, sizeof(h));
			fill(sb + sizeof(h), len - sizeof(h), (uint32_t)(k * 1000 + j), 0);
			ok = ibc_xport_mcast_send(x, g, &s, 1, IBC_XPORT_WR_SIGNALED, 2000 + (uint64_t)j) ==
				     IBC_OK &&
			     wait_ok(x, IBC_XPORT_CQ_SEND, 2000 + (uint64_t)j, NULL);
		}
	}
	barrier(); /* everything sent */
	if (member && ok) {
		int expect_all = is_shm && x->params.mcast_drop == 0;
		int want = R == root && !x->caps.mcast_loopback ? 0 : D;
		int n = drain(x, IBC_XPORT_CQ_RECV, wc, D + 4,
			      expect_all ? 200000000LL : 1000000000LL);
		for (int i = 0; i < n; i++) {
			struct dgram h;
			unsigned char *p;
			if (wc[i].status != IBC_OK || wc[i].opcode != IBC_XPORT_OP_MCAST_RECV ||
			    wc[i].wr_id < 1000 || wc[i].wr_id >= 1000 + (uint64_t)D + 4) {
				(*corrupt)++;
				continue;
			}
			p = buf + (wc[i].wr_id - 1000) * 2048;
			memcpy(&h, p, sizeof(h));
			if (h.magic != 0x1bc0ffee || (int)h.k != k || h.j >= (uint32_t)D ||
			    (int)h.sender != root || wc[i].byte_len != dgram_len((int)h.j, mtu) ||
			    !verify(p + sizeof(h), wc[i].byte_len - sizeof(h),
				    (uint32_t)(k * 1000 + (int)h.j), 0)) {
				(*corrupt)++;
				continue;
			}
			if ((int)h.sender == R)
				continue; /* loopback of my own datagram */
			if (seen[h.j]++)
				(*corrupt)++; /* duplicate */
			else
				(*got)++;
		}
		(void)want;
	}
	barrier();
	if (gdropped != NULL)
		*gdropped = g != NULL ? g->dropped : 0;
	if (g != NULL && ibc_xport_mcast_leave(x, g) != IBC_OK)
		ok = 0;
	/* leftover receive completions (flushed buffers) are dropped */
	drain(x, IBC_XPORT_CQ_RECV, wc, D + 8, 1000000);
	barrier();
	free(seen);
	free(wc);
	return ok;
}

static void test_mcast(struct world *w)
{
	const int D = 16;
	char gname[32];

	if (!w->x->caps.mcast) {
		skip(N - 1, "backend has no multicast (caps.mcast = 0)");
		return;
	}
	for (int k = 2; k <= N; k++) {
		int got, corrupt, root = k - 1, ok;
		snprintf(gname, sizeof(gname), "ibc-conf-%d", k);
		ok = mcast_round(w, w->x, w->big, w->Bl, gname, k, root, D, &got, &corrupt, NULL);
		if (R < k && R != root) {
			if (is_shm)
				ok = ok && got == D && corrupt == 0;
			else
				ok = ok && got >= 1 && corrupt == 0;
		}
		if (R < k && R != root && !is_shm && R == 0 && got < D)
			tap_diag("verbs multicast to %d members: %d of %d datagrams arrived", k, got, D);
		check(ok, "multicast to %d members (root %d): %s, intact, no duplicates", k, root,
		      is_shm ? "every datagram delivered" : "datagrams delivered");
	}
}

static void test_drops(void)
{
	struct ibc_xport_params p;
	struct ibc_xport *x;
	struct ibc_xport_mr *mr = NULL;
	struct ibc_xport_stats st;
	const int D = 200;
	int got = 0, corrupt = 0, ok, root = 0;
	uint64_t dropped = 0;

	params_default(&p);
	p.mcast_drop = 0.25;
	p.p2p_drop = is_shm ? 0.5 : 0;
	p.drop_seed = 42;
	p.rq_depth = 512;
	x = open_x(&p);
	ok = ibc_xport_mr_alloc(x, (size_t)(D + 16) * 2048 + 4096, IBC_XPORT_ACCESS_ALL, &mr) == IBC_OK;
	if (!check(ok && x->caps.drop_injection, "drops: instance with mcast_drop 0.25%s",
		   is_shm ? ", p2p_drop 0.5" : ""))
		fatal("cannot allocate");
	if (!x->caps.mcast) {
		skip(is_shm ? 2 : 1, "backend has no multicast (caps.mcast = 0)");
		ibc_xport_mr_dereg(x, mr);
		ibc_xport_close(x);
		return;
	}
	/* every receiver discards a quarter of what reaches it, counts it in its
	 * stats and in the group's counter; what it does not discard arrives
	 * intact (on verbs a datagram may also be lost for real) */
	{
		uint64_t gdropped = 0;

		ok = mcast_round(NULL, x, mr, mr->addr, "ibc-conf-drops", N, root, D, &got, &corrupt,
				 &gdropped);
		ibc_xport_stats_get(x, &st);
		dropped = st.mcast_dropped;
		if (R != root) {
			ok = ok && got > 0 && got < D && corrupt == 0 && dropped > 0 &&
			     gdropped == dropped;
			ok = ok && (is_shm ? (uint64_t)got + dropped == (uint64_t)D
					   : (uint64_t)got + dropped <= (uint64_t)D);
			if (R == 1)
				tap_diag("rank 1: %d of %d datagrams received, %llu discarded by "
					 "injection (group counter %llu)", got, D,
					 (unsigned long long)dropped, (unsigned long long)gdropped);
		}
		check(ok, "multicast with injected drops: each receiver's received + discarded = "
		      "sent%s; the group's counter = the process's", is_shm ? "" : " (or less: real losses)");
	}
	if (!is_shm) {
		ibc_xport_mr_dereg(x, mr);
		ibc_xport_close(x);
		return;
	}

	/* two-sided drops: rank 0 -> rank 1 */
	{
		const int M = 100;
		struct ibc_xport_wc wc[128];
		unsigned char *b = mr->addr;
		int n = 0;
		ok = 1;
		if (R == 1)
			for (int j = 0; j < M && ok; j++) {
				struct ibc_xport_sge s = { (uint64_t)(uintptr_t)(b + (size_t)j * 64), 64,
							   mr->lkey };
				ok = ibc_xport_recv(x, 0, NULL, &s, 1, (uint64_t)j) == IBC_OK;
			}
		barrier();
		if (R == 0) {
			struct ibc_xport_sge s = { (uint64_t)(uintptr_t)b, 16, mr->lkey };
			for (int j = 0; j < M && ok; j++)
				ok = ibc_xport_send(x, 1, &s, 1, 0, (uint64_t)j) == IBC_OK;
			ibc_xport_stats_get(x, &st);
			dropped = st.p2p_dropped;
		}
		barrier();
		if (ibc_boot_bcast(B, &dropped, sizeof(dropped), 0) != IBC_OK)
			fatal("bootstrap failed");
		if (R == 1) {
			n = drain(x, IBC_XPORT_CQ_RECV, wc, 128, 100000000LL);
			ok = ok && n > 0 && n < M && (uint64_t)(M - n) == dropped;
		}
		check(ok, "two-sided sends with injected drops: received + dropped = sent");
	}
	ibc_xport_mr_dereg(x, mr);
	ibc_xport_close(x);
}

/* ---------------------------------------------------------- errors ----- */

enum ecase { E_BAD_RKEY, E_RANGE_END, E_RANGE_BEFORE, E_DEREG, E_READ_BAD_RKEY,
	     E_UNSIGNALED, E_LOCAL_PROT, E_RECV_SMALL, E_ATOMIC_RANGE, E_COUNT };
static const char *const ecase_name[E_COUNT] = {
	"write with a bad rkey", "write past the end of the region",
	"write before the start of the region", "write to deregistered memory",
	"read with a bad rkey", "unsignaled write with a bad rkey",
	"write from an unregistered local buffer (bad lkey)",
	"send larger than the receive buffer", "fetch-add outside the region",
};

static void error_case(enum ecase c)
{
	struct ibc_xport_params p;
	struct ibc_xport *x;
	struct ibc_xport_mr *mr = NULL;
	struct ibc_xport_rdesc rd[MAXR];
	struct ibc_xport_wc wc;
	const size_t LEN = 64 * 1024;
	int ok = 1, rc, got_err = 0, recv_err = 1;
	const char *reason = "";

	params_default(&p);
	x = open_x(&p);
	rc = ibc_xport_mr_alloc(x, LEN, IBC_XPORT_ACCESS_ALL, &mr);
	if (rc != IBC_OK || ibc_xport_rdesc_allgather(x, &mr->rdesc, rd) != IBC_OK)
		fatal("error case setup failed");
	memset(mr->addr, 0x5A, LEN);
	if (c == E_RECV_SMALL && R == 1) {
		struct ibc_xport_sge s = { (uint64_t)(uintptr_t)mr->addr, 16, mr->lkey };
		ok = ibc_xport_recv(x, 0, NULL, &s, 1, 77) == IBC_OK;
	}
	if (c == E_DEREG && R == 1) {
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
		case E_COUNT:
			break;
		}
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
		check(ok && got_err && recv_err, "error completion: %s -> \"%s\"%s", ecase_name[c], rs,
		      c == E_RECV_SMALL ? " (and an error receive completion)" :
		      c == E_DEREG || c == E_LOCAL_PROT ? "" : ", target untouched");
	}
	if (mr != NULL)
		ibc_xport_mr_dereg(x, mr);
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

/* ---------------------------------------------------------- main ------- */

static void run_job(int n, int full)
{
	struct world w;
	int rc = ibc_boot_fork_open(n, &B);

	if (rc != IBC_OK) {
		tap_ok(0, "fork bootstrap with %d ranks: %s", n, ibc_status_str(rc));
		return;
	}
	R = B->rank;
	N = B->size;
	if (R != 0) {
		char tag[32];
		snprintf(tag, sizeof(tag), "rank %d", R);
		ibc_log_tag_set(tag);
	}
	if (R == 0)
		tap_diag("--- %d ranks on %s%s", N, backend, full ? "" : " (smoke)");
	world_open(&w);
	test_caps(&w);
	test_no_names_while_running(&w);
	if (full) {
		test_write(&w);
		test_user_mem(&w);
		test_read(&w);
		test_write_imm(&w);
		test_send_recv(&w);
		test_post_list(&w);
		test_ordering(&w);
		test_atomics(&w);
		test_mcast(&w);
		test_wait(&w);
		ibc_log_level_set(IBC_LOG_NONE); /* the refusals below are logged as errors */
		test_args(&w);
		ibc_log_init("conformance");
	} else {
		/* a quick write both ways and a repeated open/close */
		struct ibc_xport_sge s = sge_of(&w, w.Bl, 4096);
		int ok;
		fill(w.Bl, 4096, seed_of(R, 99, 0), 0);
		barrier();
		ok = ibc_xport_write(w.x, right(), &s, 1, raddr_of(&w, right(), 0),
				     w.rd[right()].rkey, IBC_XPORT_WR_SIGNALED, 1) == IBC_OK &&
		     wait_ok(w.x, IBC_XPORT_CQ_SEND, 1, NULL);
		barrier();
		check(ok && verify(w.A, 4096, seed_of(left(), 99, 0), 0), "smoke write with %d ranks", N);
	}
	world_close(&w);
	if (full) {
		test_drops();
		for (int c = 0; c < E_COUNT; c++)
			error_case((enum ecase)c);
		test_xrc();
	} else {
		for (int k = 0; k < 2; k++) {
			world_open(&w);
			world_close(&w);
		}
	}
	rc = ibc_boot_close(B);
	if (R != 0)
		exit(0); /* verdicts went to rank 0; tap state here is rank 0's copy */
	tap_ok(rc == IBC_OK, "%d-rank job ends cleanly (%s)", n, ibc_status_str(rc));
	tap_ok(count_shm_leftovers() == 0, "no /dev/shm/ibcx-%d-* leftovers after close",
	       (int)root_pid);
}

/* A rank dies by SIGKILL while the transport is open with registered memory:
 * nothing of the job may remain in /dev/shm (names go at open / allocation). */
static void crash_job(void)
{
	struct ibc_xport_params p;
	struct ibc_xport *x = NULL;
	struct ibc_xport_mr *mr = NULL;
	int rc = ibc_boot_fork_open(2, &B), left_now, left_after, err;

	if (rc != IBC_OK) {
		tap_ok(0, "fork bootstrap for the crash case: %s", ibc_status_str(rc));
		return;
	}
	R = B->rank;
	N = B->size;
	params_default(&p);
	rc = ibc_xport_open(B, &p, &x);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, NULL);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, 1 * MIB, IBC_XPORT_ACCESS_ALL, &mr);
	err = ibc_boot_barrier(B);
	if (R == 1) {
		if (rc == IBC_OK && err == IBC_OK)
			raise(SIGKILL);
		exit(1);
	}
	/* the peer is gone: must not hang; the bootstrap's and close's complaints
	 * about it are expected, so they are muted */
	ibc_log_level_set(IBC_LOG_NONE);
	err = ibc_boot_barrier(B);
	left_now = count_shm_leftovers();
	if (x != NULL)
		ibc_xport_close(x);
	ibc_boot_close(B);
	ibc_log_init("conformance");
	left_after = count_shm_leftovers();
	tap_ok(rc == IBC_OK && err != IBC_OK, "crash case: open + mr_alloc ran (%s), the dead peer is "
	       "noticed (%s)", ibc_status_str(rc), ibc_status_str(err));
	tap_ok(left_now == 0 && left_after == 0, "crash case: no /dev/shm names while the dead "
	       "peer's job is still open (%d) nor after (%d)", left_now, left_after);
}

int main(void)
{
	const char *e = getenv("IBC_TEST_XPORT");
	int ranks = 8;

	ibc_log_init("conformance");
	backend = e != NULL && *e ? e : "shm";
	is_shm = strcmp(backend, "shm") == 0 ||
		 (strcmp(backend, "auto") == 0 && strcmp(ibc_xport_auto_backend(), "shm") == 0);
	if (!is_shm)
		ranks = 4; /* a Soft-RoCE guest is slow: fewer ranks by default */
	e = getenv("IBC_TEST_RANKS");
	if (e != NULL && atoi(e) >= 2)
		ranks = atoi(e) > MAXR ? MAXR : atoi(e);
	if (strcmp(backend, "verbs") == 0 && strcmp(ibc_xport_auto_backend(), "verbs") != 0)
		tap_skip_all("no RDMA device with an active port for IBC_TEST_XPORT=verbs");
	root_pid = getpid();
	tap_plan_none();
	run_job(ranks, 1);
	run_job(2, 0);
	if (is_shm)
		crash_job();
	else
		tap_skip(2, "crash case checks /dev/shm names: shm only");
	return tap_done();
}
