/* impl/family: one transport carries two families.  On ONE transport (fork
 * bootstrap, p = 3 and 5 ranks) a barrier instance and an all-to-all
 * instance live at once and run interleaved (all-to-all, barrier, all-to-all
 * ...) with random delays: every barrier algorithm paired with an
 * all-to-all algorithm, one-sided with two-sided and two-sided with
 * two-sided (both then share the transport's receive queues), destroyed in
 * either order.  Every byte of every all-to-all is checked at every rank
 * (eager and rendezvous sizes), and no barrier may release early (the
 * barrier check, as tests/barrier/barrier.c).  A router that drops the other
 * family's completions, or two receive pools on one queue, fail it.
 *
 * Environment:
 *   IBC_TEST_XPORT          transport backend (default shm; verbs in the guest)
 *   IBC_TEST_FAMILY_ITERS   rounds per case (default 40) */
#include "alltoall/alltoall.h"
#include "barrier/barrier.h"
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "xport/xport.h"
#include "tap.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *backend = "shm";
static long ncores = 1, iters = 40;

struct tcase {
	const char *barrier, *alltoall;
	int n;
	int barrier_first_out;  /* destroy the barrier before the all-to-all */
};

struct rank_report {
	uint64_t bad, violations;
	int32_t rc, skipped;
};

static const size_t sizes[] = { 1, 24, 700, 5000, 20000 }; /* eager and rendezvous */
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void jitter(unsigned *seed)
{
	if (rand_r(seed) % 3 != 0)
		return;
	if (rand_r(seed) % 4 == 0)
		sched_yield();
	else
		ibc_timer_spin_us((double)(rand_r(seed) % 40));
}

static int rank_body(struct ibc_boot *boot, const struct tcase *tc, struct rank_report *rep)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_alltoall_params ap;
	struct ibc_barrier_params bp;
	struct ibc_alltoall *a = NULL;
	struct ibc_barrier *b = NULL;
	struct ibc_barrier_check *chk = NULL;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	unsigned seed = 4242u + 977u * (unsigned)boot->rank + (unsigned)tc->n;
	size_t maxm = sizes[NSIZES - 1];
	uint64_t it = 0;
	long k;
	int rc, rc2, agreed;

	ibc_xport_params_init(&xp);
	xp.backend = backend;
	xp.wait = tc->n >= ncores ? IBC_WAIT_SPIN_YIELD : IBC_WAIT_SPIN;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	if (ibc_alltoall_alg_usable(ibc_alltoall_alg_find(tc->alltoall), x, tc->n, NULL, 0) ||
	    ibc_barrier_alg_usable(ibc_barrier_alg_find(tc->barrier), x, NULL, 0)) {
		rep->skipped = 1;
		goto out_close;
	}
	if (posix_memalign((void **)&sbuf, 4096, (size_t)tc->n * maxm) ||
	    posix_memalign((void **)&rbuf, 4096, (size_t)tc->n * maxm)) {
		rc = IBC_ERR_NOMEM;
		goto out_close;
	}
	ibc_alltoall_params_init(&ap);
	ap.max_bytes = maxm;
	ap.deadline_s = 15;
	ap.jitter_us = 20;
	ap.jitter_seed = 7;
	ibc_barrier_params_init(&bp);
	bp.deadline_s = 15;
	rc = ibc_alltoall_create(x, tc->alltoall, &ap, &a);
	if (rc == IBC_OK)
		rc = ibc_barrier_create(x, tc->barrier, &bp, &b);
	if (rc == IBC_OK)
		rc = ibc_alltoall_setup(a);
	if (rc == IBC_OK)
		rc = ibc_barrier_setup(b);
	if (rc == IBC_OK)
		rc = ibc_barrier_check_open(boot, x, IBC_BARRIER_CHECK_AUTO, (size_t)iters, &chk);
	for (k = 0; k < iters && rc == IBC_OK; k++) {
		size_t m = sizes[(size_t)k % NSIZES];

		it++;
		ibc_alltoall_fill(sbuf, boot->rank, tc->n, m, it);
		jitter(&seed);
		rc = ibc_alltoall_run(a, sbuf, rbuf, m);
		if (rc)
			break;
		rep->bad += ibc_alltoall_check(rbuf, boot->rank, tc->n, m, it, NULL, NULL);
		jitter(&seed);
		ibc_barrier_check_enter(chk);
		rc = ibc_barrier_run(b);
		(void)ibc_barrier_check_exit(chk); /* counted, reported at close */
	}
	if (rc) {
		/* the others may be waiting for us: end the job instead of hanging */
		ibc_boot_abort(boot, 1, "family test failed");
		return rc;
	}
	if (chk) {
		rc = ibc_barrier_check_close(chk, &rep->violations);
		chk = NULL;
	}
	if (tc->barrier_first_out) {
		rc2 = ibc_barrier_destroy(b);
		b = NULL;
		if (rc == IBC_OK)
			rc = rc2;
	}
	rc2 = ibc_alltoall_destroy(a);
	if (rc == IBC_OK)
		rc = rc2;
	rc2 = ibc_barrier_destroy(b);
	if (rc == IBC_OK)
		rc = rc2;
out_close:
	free(sbuf);
	free(rbuf);
	if (ibc_boot_agree(boot, rc, &agreed) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	rc2 = ibc_xport_close(x);
	return rc ? rc : rc2;
}

static void check_case(const struct tcase *tc)
{
	struct ibc_boot *boot = NULL;
	struct rank_report mine, *all = NULL, sum;
	double t0 = ibc_timer_now_us();
	int rc, r;

	memset(&mine, 0, sizeof(mine));
	memset(&sum, 0, sizeof(sum));
	fflush(stdout);
	rc = ibc_boot_fork_open(tc->n, &boot);
	if (rc) {
		tap_ok(0, "%s + %s p=%d: fork (%s)", tc->barrier, tc->alltoall, tc->n,
		       ibc_status_str(rc));
		return;
	}
	mine.rc = rank_body(boot, tc, &mine);
	all = calloc((size_t)tc->n, sizeof(*all));
	if (all == NULL || ibc_boot_allgather(boot, &mine, all, sizeof(mine)) != IBC_OK)
		mine.rc = IBC_ERR_IO;
	if (boot->rank != 0) {
		(void)ibc_boot_close(boot);
		_exit(mine.rc ? 1 : 0);
	}
	rc = ibc_boot_close(boot);
	for (r = 0; all && r < tc->n; r++) {
		if (all[r].rc && rc == IBC_OK)
			rc = all[r].rc;
		sum.bad += all[r].bad;
		sum.violations += all[r].violations;
		sum.skipped |= all[r].skipped;
	}
	if (all == NULL && rc == IBC_OK)
		rc = mine.rc;
	free(all);
	if (sum.skipped) {
		tap_skip(1, "%s + %s p=%d: not usable on %s", tc->barrier, tc->alltoall, tc->n,
			 backend);
		return;
	}
	tap_ok(rc == IBC_OK && sum.bad == 0 && sum.violations == 0,
	       "%s + %s p=%d on one transport, %ld rounds, %s destroyed first: every byte right, "
	       "no early release (%s, %llu wrong bytes, %llu violations, %.0f ms)", tc->barrier,
	       tc->alltoall, tc->n, iters, tc->barrier_first_out ? "barrier" : "all-to-all",
	       ibc_status_str(rc), (unsigned long long)sum.bad,
	       (unsigned long long)sum.violations, (ibc_timer_now_us() - t0) / 1e3);
}

int main(void)
{
	/* each barrier with a one-sided and a two-sided all-to-all */
	static const char *const pairs[][2] = {
		{ "pe", "pairwise" }, { "ds", "bruck" },  { "pe", "direct" },
		{ "rds", "hrwg" },    { "rpe", "de" },    { "rds", "pairwise" },
		{ "rgm", "bruck" },   { "rgm", "hrwg" },  { "ds", "de" },
	};
	static const int ns[] = { 3, 5 };
	size_t i, j;

	ibc_log_init("shared.t");
	if (getenv("IBC_TEST_XPORT") && *getenv("IBC_TEST_XPORT"))
		backend = getenv("IBC_TEST_XPORT");
	if (getenv("IBC_TEST_FAMILY_ITERS") && atol(getenv("IBC_TEST_FAMILY_ITERS")) > 0)
		iters = atol(getenv("IBC_TEST_FAMILY_ITERS"));
	ncores = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncores < 1)
		ncores = 1;
	tap_plan_none();
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (j = 0; j < sizeof(pairs) / sizeof(pairs[0]); j++) {
			struct tcase tc = { .barrier = pairs[j][0], .alltoall = pairs[j][1],
					    .n = ns[i], .barrier_first_out = (int)(j % 2) };

			check_case(&tc);
		}
	return tap_done();
}
