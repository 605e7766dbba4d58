/* The placement probe kernel: cache-line ping-pong between two processes of
 * one node through a MAP_SHARED line (ibc_boot_shm_map).  One
 * 64-bit counter in the line: a writes odd values (ping), b answers with the
 * next even one (pong), so the line bounces between the two caches.  The
 * write round is a one-sided write ping-pong with no transport: each side
 * stores into the line the other polls and polls its own, with a pause
 * between polls, as a shm write-lat does. */
#include "harness/harness.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"
#include "core/wait.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PROBE_MAP 4096
#define PROBE_LINE_B 2048 /* b's line in the write round (a's is at 0) */
#define PROBE_TIMEOUT_US 5e6
#define PROBE_CHECK_EVERY 4096

struct ibc_probe {
	struct ibc_boot *boot;
	int role;                 /* 0 = a, 1 = b, -1 = bystander */
	_Atomic uint64_t *line;
	_Atomic uint64_t *line_b;  /* b's line in the write round (a's is line) */
	uint64_t seq;
};

int ibc_probe_role(const struct ibc_probe *p) { return p->role; }

int ibc_probe_open(struct ibc_boot *b, int rank_a, int rank_b, struct ibc_probe **out)
{
	struct ibc_probe *p;
	void *map;
	int rc;

	*out = NULL;
	if (rank_a == rank_b || rank_a < 0 || rank_b < 0 || rank_a >= b->size || rank_b >= b->size) {
		ibc_error("probe: needs two distinct ranks of %d (%d, %d given)", b->size, rank_a, rank_b);
		return IBC_ERR_INVAL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return IBC_ERR_NOMEM; /* peers would block in the mapping below: best effort */
	p->boot = b;
	p->role = b->rank == rank_a ? 0 : b->rank == rank_b ? 1 : -1;
	/* the line starts at 0 (a new segment is zero-filled) */
	rc = ibc_boot_shm_map(b, rank_a, "probe", PROBE_MAP, p->role >= 0, &map);
	if (rc != IBC_OK) {
		free(p);
		return rc;
	}
	p->line = map;
	p->line_b = (_Atomic uint64_t *)(void *)((char *)map + PROBE_LINE_B);
	*out = p;
	return IBC_OK;
}

/* Polls line until it holds want: a bare loop, or with pause set the loop
 * of ibchar's spin waits (a pause between polls, ibc_wait_relax) */
static int wait_value(_Atomic uint64_t *line, uint64_t want, int yield, int pause)
{
	unsigned long polls = 0;
	double deadline = 0;

	while (atomic_load_explicit(line, memory_order_acquire) != want) {
		if (pause)
			ibc_wait_relax(IBC_WAIT_SPIN, &polls);
		else
			polls++;
		if (yield > 0 && polls >= (unsigned long)yield)
			sched_yield();
		if (polls % PROBE_CHECK_EVERY == 0) {
			double now = ibc_timer_now_us();

			if (ibc_wait_aborted())
				return IBC_ERR_INTERRUPTED;
			if (deadline == 0) {
				deadline = now + PROBE_TIMEOUT_US;
			} else if (now > deadline) {
				ibc_error("probe: the peer did not answer within %.0f s",
					  PROBE_TIMEOUT_US / 1e6);
				return IBC_ERR_TIMEOUT;
			}
		}
	}
	return IBC_OK;
}

int ibc_probe_yield(enum ibc_wait w)
{
	return w == IBC_WAIT_SPIN ? 0 : IBC_PROBE_YIELD_AFTER;
}

/* One round trip: a stores the ping into line_b and polls line_a for the
 * pong, b polls line_b and stores the pong into line_a.  The probe bounces
 * one line (line_a = line_b); the write round uses two. */
static int round_trip(struct ibc_probe *p, _Atomic uint64_t *line_a, _Atomic uint64_t *line_b,
		      int yield, int pause)
{
	int rc;

	if (p->role < 0)
		return IBC_OK;
	p->seq += 2;
	if (p->role == 0) {
		atomic_store_explicit(line_b, p->seq - 1, memory_order_release);
		return wait_value(line_a, p->seq, yield, pause);
	}
	rc = wait_value(line_b, p->seq - 1, yield, pause);
	if (rc == IBC_OK)
		atomic_store_explicit(line_a, p->seq, memory_order_release);
	/* sharing a PU (yield 1): hand it back at once, so a's round trip is
	 * the two switches, not whatever b does next */
	if (rc == IBC_OK && yield == 1)
		sched_yield();
	return rc;
}

int ibc_probe_round(struct ibc_probe *p, int yield)
{
	return round_trip(p, p->line, p->line, yield, 0);
}

int ibc_probe_round_write(struct ibc_probe *p, int yield)
{
	return round_trip(p, p->line, p->line_b, yield, 1);
}

int ibc_probe_measure(struct ibc_probe *p, long rounds, int yield, double *oneway_us)
{
	double *rtt = NULL;
	struct ibc_stats st;
	uint64_t t0;
	long i, warm = rounds / 10 + 1;
	int rc = IBC_OK;

	*oneway_us = -1;
	if (p->role < 0 || rounds < 1)
		return IBC_OK;
	if (p->role == 0) {
		rtt = malloc(sizeof(double) * (size_t)rounds);
		if (rtt == NULL)
			return IBC_ERR_NOMEM; /* b times out after 5 s */
	}
	for (i = 0; i < warm && rc == IBC_OK; i++)
		rc = ibc_probe_round(p, yield);
	for (i = 0; i < rounds && rc == IBC_OK; i++) {
		t0 = ibc_timer_ticks();
		rc = ibc_probe_round(p, yield);
		if (rtt != NULL)
			rtt[i] = ibc_timer_ticks_to_us(ibc_timer_ticks() - t0);
	}
	if (rc == IBC_OK && rtt != NULL) {
		rc = ibc_stats_compute_inplace(rtt, (size_t)rounds, &st);
		if (rc == IBC_OK)
			*oneway_us = st.p50 / 2;
	}
	free(rtt);
	return rc;
}

void ibc_probe_close(struct ibc_probe *p)
{
	if (p == NULL)
		return;
	if (p->line != NULL)
		munmap((void *)p->line, PROBE_MAP);
	free(p);
}
