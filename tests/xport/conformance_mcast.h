/* Conformance: multicast to 2..N members and injected drops.  Part of
 * conformance.c. */
#ifndef IBC_TESTS_XPORT_CONFORMANCE_MCAST_H
#define IBC_TESTS_XPORT_CONFORMANCE_MCAST_H

#include "conformance.h"

#include <sys/resource.h>

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

/* shm, two ranks of a fresh instance in one group: rank 0 publishes, rank 1
 * reads (test_mcast_resident, test_overrun) */
struct mpair {
	struct ibc_xport *x;
	struct ibc_xport_mr *mr;  /* MPAIR_RQ receive slots of 64 bytes, then the send word */
	struct ibc_xport_mcast *g;
};

#define MPAIR_RQ 64

static int mpair_open(struct mpair *m, const char *name)
{
	struct ibc_xport_params p;
	int ok;

	params_default(&p);
	m->x = open_x(&p);
	m->g = NULL;
	ok = ibc_xport_mr_alloc(m->x, (size_t)(MPAIR_RQ + 1) * 64, IBC_XPORT_ACCESS_ALL, &m->mr) == IBC_OK;
	if (ok && R < 2)
		ok = ibc_xport_mcast_join(m->x, name, 0, &m->g) == IBC_OK;
	barrier();
	return ok;
}

/* rank 0: S datagrams, each its number 1..S (8 bytes), one at a time */
static int mpair_publish(struct mpair *m, int S)
{
	uint64_t *sb = (uint64_t *)(void *)((unsigned char *)m->mr->addr + (size_t)MPAIR_RQ * 64);
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)sb, 8, m->mr->lkey };
	int ok = 1;

	for (int j = 0; j < S && ok; j++) {
		*sb = (uint64_t)j + 1;
		ok = ibc_xport_mcast_send(m->x, m->g, &s, 1, IBC_XPORT_WR_SIGNALED, (uint64_t)j) == IBC_OK &&
		     wait_ok(m->x, IBC_XPORT_CQ_SEND, (uint64_t)j, NULL);
	}
	return ok;
}

/* rank 1: reads MPAIR_RQ receives at a time until a batch comes short;
 * *got datagrams, *last the last number read, *ordered whether the numbers grew */
static int mpair_read(struct mpair *m, int *got, uint64_t *last, int *ordered)
{
	struct ibc_xport_wc wc[MPAIR_RQ];
	int ok = 1, n;

	*got = 0;
	*last = 0;
	*ordered = 1;
	do {
		for (int j = 0; j < MPAIR_RQ && ok; j++) {
			struct ibc_xport_sge s = {
				(uint64_t)(uintptr_t)((unsigned char *)m->mr->addr + (size_t)j * 64), 64,
				m->mr->lkey };

			ok = ibc_xport_recv(m->x, -1, m->g, &s, 1, (uint64_t)j) == IBC_OK;
		}
		n = ok ? drain(m->x, IBC_XPORT_CQ_RECV, wc, MPAIR_RQ, 50000000LL) : 0;
		for (int i = 0; i < n; i++) {
			uint64_t v;

			memcpy(&v, (unsigned char *)m->mr->addr + wc[i].wr_id * 64, 8);
			*ordered = *ordered && wc[i].status == IBC_OK && v > *last;
			*last = v;
		}
		*got += n;
	} while (n == MPAIR_RQ && ok);
	return ok;
}

static void mpair_close(struct mpair *m)
{
	if (m->g != NULL)
		ibc_xport_mcast_leave(m->x, m->g);
	ibc_xport_mr_dereg(m->x, m->mr);
	ibc_xport_close(m->x);
}

/* shm: a group's ring is resident from the join: publishing and reading the
 * first lap of it (512 datagrams, a slot a page) faults no page into the
 * sender or the member (it did: ~1 per datagram on each side, 3.7 us an RGM
 * barrier against 0.5 once the ring had wrapped). */
static void test_mcast_resident(void)
{
	struct mpair m;
	struct rusage ru0, ru1;
	const int S = 512;
	uint64_t last = 0;
	long faults;
	int ok, got = 0, ordered = 1;

	if (!is_shm) {
		skip(1, "multicast ring residency: shm only (verbs pins its receive buffers)");
		return;
	}
	ok = mpair_open(&m, "ibc-conf-resident");
	getrusage(RUSAGE_SELF, &ru0);
	if (R == 0 && ok)
		ok = mpair_publish(&m, S);
	barrier(); /* everything sent */
	if (R == 1 && ok)
		ok = mpair_read(&m, &got, &last, &ordered) && got == S && ordered && last == (uint64_t)S;
	getrusage(RUSAGE_SELF, &ru1);
	if (R < 2) {
		faults = ru1.ru_minflt - ru0.ru_minflt + ru1.ru_majflt - ru0.ru_majflt;
		ok = ok && faults < S / 8;
		tap_diag("rank %d: %ld page faults over a first lap of %d datagrams", R, faults, S);
	}
	check(ok, "multicast ring resident from the join: a first lap of %d datagrams faults fewer "
	      "than %d pages into the sender and the member", S, S / 8);
	mpair_close(&m);
}

/* shm: rank 0 publishes S datagrams (its sequence number) to a group while
 * member rank 1 reads nothing; then rank 1 reads with a few receives at a
 * time.  A group holds a ring's depth of datagrams: the older ones are
 * overwritten, lost to rank 1 and counted (mcast_overrun); what it reads is
 * the newest ones, in order, and read + lost = sent. */
static void test_overrun(void)
{
	struct mpair m;
	struct ibc_xport_stats st;
	const int S = 5000;
	uint64_t last = 0;
	int ok, got = 0, ordered = 1;

	if (!is_shm) {
		skip(1, "multicast overrun: shm only (a UD receiver without buffers loses datagrams "
		     "unseen)");
		return;
	}
	ok = mpair_open(&m, "ibc-conf-overrun");
	if (R == 0 && ok)
		ok = mpair_publish(&m, S);
	barrier(); /* everything sent */
	if (R == 1) {
		ok = ok && mpair_read(&m, &got, &last, &ordered);
		ibc_xport_stats_get(m.x, &st);
		ok = ok && ordered && st.mcast_overrun > 0 && (uint64_t)got + st.mcast_overrun ==
			(uint64_t)S && last == (uint64_t)S;
		tap_diag("rank 1: read %d of %d datagrams, %llu overwritten unread", got, S,
			 (unsigned long long)st.mcast_overrun);
	}
	check(ok, "multicast overrun: a member a whole ring behind reads the newest datagrams in "
	      "order; the overwritten ones are counted (read + overrun = sent)");
	mpair_close(&m);
}

#endif
