/* The transport conformance suite's ground: the job's globals, collective
 * checks (every rank's verdict gathered to rank 0, which prints TAP),
 * payload patterns and the world (an open transport, one big registration
 * per rank, every rank's descriptor).  Included by tests/xport/conformance.c
 * and its conformance_*.h parts only (one test binary). */
#ifndef IBC_TESTS_XPORT_CONFORMANCE_H
#define IBC_TESTS_XPORT_CONFORMANCE_H

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

#endif
