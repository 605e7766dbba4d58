/* impl/alltoall: every algorithm of the table at p = 1..9, 12, 16 (fork
 * bootstrap), sizes 1 B .. 1 MiB per pair, calls back to back with no
 * barrier between them and random delays (before calls and inside them);
 * every byte checked at every rank after every call (12 calls per size, 4 at
 * 64 KiB, 2 at 1 MiB; its value depends on
 * source, destination, offset and call, so a block from a stale half or an
 * older call is caught).  Mutants of HRWG (no tail-flag wait; one half for
 * every call) must fail the check.  The registration cache's counters.
 *
 * Environment:
 *   IBC_TEST_XPORT          transport backend (default shm; verbs in the guest)
 *   IBC_TEST_A2A_NMAX       largest p (default 16)
 *   IBC_TEST_A2A_CALLS      calls per size (default 12)
 *   IBC_TEST_A2A_MAXSIZE    largest size per pair (default 1 MiB) */
#include "alltoall/alltoall.h"
#include "alltoall/alltoall_model.h"
#include "boot/boot.h"
#include "core/status.h"
#include "core/timer.h"
#include "regcache/regcache.h"
#include "xport/xport.h"
#include "tap.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *backend = "shm";
static long ncores = 1, calls_per_size = 12;

struct tcase {
	const char *alg;
	int n;
	const size_t *sizes;
	size_t nsizes;
	enum ibc_alltoall_mutant mutant;
	long calls;          /* 0 = calls_per_size */
};

struct tresult {
	int status;          /* the job's */
	uint64_t bad;        /* wrong bytes, summed over ranks */
	int bad_rank, bad_src;
	size_t bad_m, bad_off;
	long bad_call;
	int skipped;
	char why[160];
};

struct rank_report {
	uint64_t bad;
	int src;
	uint32_t pad;
	uint64_t m, off;
	int64_t call;
	int32_t rc, skipped;
};

static int rank_body(struct ibc_boot *boot, const struct tcase *tc, struct rank_report *rep,
		     char *why, size_t whylen)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_alltoall_params ap;
	struct ibc_alltoall *a = NULL;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	unsigned seed = 777u + 131u * (unsigned)boot->rank + (unsigned)tc->n;
	size_t maxm = 0, i;
	long calls = tc->calls > 0 ? tc->calls : calls_per_size, c;
	uint64_t it = 0;
	int rc, rc2, agreed;

	for (i = 0; i < tc->nsizes; i++)
		if (tc->sizes[i] > maxm)
			maxm = tc->sizes[i];
	ibc_xport_params_init(&xp);
	xp.backend = backend;
	xp.wait = tc->n > 1 && tc->n >= ncores ? IBC_WAIT_SPIN_YIELD : IBC_WAIT_SPIN;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	rc = ibc_alltoall_alg_usable(ibc_alltoall_alg_find(tc->alg), x, tc->n, why, whylen);
	if (rc == IBC_ERR_UNSUPPORTED) {
		rep->skipped = 1;
		rc = IBC_OK;
		goto out_close;
	}
	ibc_alltoall_params_init(&ap);
	ap.max_bytes = maxm;
	ap.deadline_s = 30;
	ap.jitter_us = 30;
	ap.jitter_seed = 99;
	ap.mutant = tc->mutant;
	if (posix_memalign((void **)&sbuf, 4096, (size_t)tc->n * maxm) ||
	    posix_memalign((void **)&rbuf, 4096, (size_t)tc->n * maxm)) {
		rc = IBC_ERR_NOMEM;
		goto out_close;
	}
	rc = ibc_alltoall_create(x, tc->alg, &ap, &a);
	if (rc == IBC_OK)
		rc = ibc_alltoall_setup(a);
	for (i = 0; i < tc->nsizes && rc == IBC_OK; i++) {
		size_t m = tc->sizes[i];

		/* a few calls of the large sizes: the bytes, not the calls, cost */
		long ncalls = m >= (1 << 20) ? (calls < 2 ? calls : 2) : m >= 65536 ? (calls < 4 ? calls : 4)
										    : calls;

		for (c = 0; c < ncalls && rc == IBC_OK; c++) {
			int src = -1;
			size_t off = 0, bad;

			it++;
			ibc_alltoall_fill(sbuf, boot->rank, tc->n, m, it);
			if (rand_r(&seed) % 4 == 0) {
				if (rand_r(&seed) % 3 == 0)
					sched_yield();
				else
					ibc_timer_spin_us((double)(rand_r(&seed) % 50));
			}
			rc = ibc_alltoall_run(a, sbuf, rbuf, m);
			if (rc)
				break;
			bad = ibc_alltoall_check(rbuf, boot->rank, tc->n, m, it, &src, &off);
			if (bad > 0 && rep->bad == 0) {
				rep->src = src;
				rep->m = m;
				rep->off = off;
				rep->call = (int64_t)it;
			}
			rep->bad += bad;
		}
	}
	rc2 = ibc_alltoall_destroy(a);
	if (rc == IBC_OK)
		rc = rc2;
out_close:
	free(sbuf);
	free(rbuf);
	/* every rank gets here, also after a failure (e.g. a mutant's error
	 * completion): agree, then close together */
	if (ibc_boot_agree(boot, rc, &agreed) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	rc2 = ibc_xport_close(x);
	return rc ? rc : rc2;
}

/* Forks tc->n ranks; rank 0 (this process) gathers the reports. */
static void run_case(const struct tcase *tc, struct tresult *res)
{
	struct ibc_boot *boot = NULL;
	struct rank_report mine, *all;
	int rc, r;

	memset(res, 0, sizeof(*res));
	memset(&mine, 0, sizeof(mine));
	fflush(stdout);
	rc = ibc_boot_fork_open(tc->n, &boot);
	if (rc) {
		res->status = rc;
		return;
	}
	mine.rc = rank_body(boot, tc, &mine, res->why, sizeof(res->why));
	all = calloc((size_t)tc->n, sizeof(*all));
	if (all == NULL || ibc_boot_allgather(boot, &mine, all, sizeof(mine)) != IBC_OK)
		mine.rc = IBC_ERR_IO;
	if (boot->rank != 0) {
		(void)ibc_boot_close(boot);
		_exit(mine.rc ? 1 : 0);
	}
	res->status = ibc_boot_close(boot);
	res->bad_rank = -1;
	for (r = 0; all && r < tc->n; r++) {
		if (all[r].rc && res->status == IBC_OK)
			res->status = all[r].rc;
		if (all[r].bad > 0 && res->bad_rank < 0) {
			res->bad_rank = r;
			res->bad_src = all[r].src;
			res->bad_m = all[r].m;
			res->bad_off = all[r].off;
			res->bad_call = (long)all[r].call;
		}
		res->bad += all[r].bad;
		res->skipped |= all[r].skipped;
	}
	free(all);
}

static void check_case(const struct tcase *tc)
{
	struct tresult r;
	double t0 = ibc_timer_now_us();

	run_case(tc, &r);
	if (r.skipped) {
		tap_skip(1, "%s p=%d: %s", tc->alg, tc->n, r.why);
		return;
	}
	if (r.bad)
		tap_diag("%s p=%d: %llu wrong bytes; first at rank %d, block from %d, m=%zu, "
			 "offset %zu, call %ld", tc->alg, tc->n, (unsigned long long)r.bad,
			 r.bad_rank, r.bad_src, r.bad_m, r.bad_off, r.bad_call);
	tap_ok(r.status == IBC_OK && r.bad == 0, "%s p=%d: %zu sizes up to %zu B, every byte "
	       "right at every rank (%s, %.0f ms)", tc->alg, tc->n, tc->nsizes,
	       tc->sizes[tc->nsizes - 1], ibc_status_str(r.status), (ibc_timer_now_us() - t0) / 1e3);
}

static void check_mutant(const char *alg, int n, enum ibc_alltoall_mutant mu, const char *what)
{
	static const size_t sizes[] = { 8, 64, 1024 };
	struct tcase tc = { .alg = alg, .n = n, .sizes = sizes, .nsizes = 3, .mutant = mu,
			    .calls = 60 };
	struct tresult r;

	run_case(&tc, &r);
	tap_ok(r.bad > 0 || r.status != IBC_OK, "mutant %s (%s p=%d) is caught: %llu wrong "
	       "bytes, status %s", what, alg, n, (unsigned long long)r.bad,
	       ibc_status_str(r.status));
}

/* The registration cache on its own: hits, misses, invalidation, eviction. */
static int do_regcache(struct ibc_boot *boot, uint64_t *out)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_regcache *c = NULL;
	struct ibc_xport_mr *mr1, *mr2, *mr3;
	struct ibc_regcache_stats st;
	char *buf = malloc(1 << 16), *other = malloc(1 << 12);
	int hit1 = -1, hit2 = -1, hit3 = -1, hit4 = -1, rc;
	int inval_busy;

	ibc_xport_params_init(&xp);
	xp.backend = backend;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc || !buf || !other)
		return rc ? rc : IBC_ERR_NOMEM;
	rc = ibc_regcache_open(x, 2, &c);
	if (rc == IBC_OK)
		rc = ibc_regcache_get(c, buf, 1 << 16, IBC_XPORT_ACCESS_ALL, &mr1, &hit1);
	if (rc == IBC_OK) /* inside the first: a hit */
		rc = ibc_regcache_get(c, buf + 4096, 100, IBC_XPORT_ACCESS_REMOTE_WRITE, &mr2, &hit2);
	inval_busy = rc == IBC_OK ? ibc_regcache_invalidate(c, buf, 1 << 16) : IBC_OK;
	if (rc == IBC_OK) {
		ibc_regcache_put(c, mr1);
		ibc_regcache_put(c, mr2);
		rc = ibc_regcache_invalidate(c, buf + 100, 1); /* overlaps: dropped */
	}
	if (rc == IBC_OK)
		rc = ibc_regcache_get(c, buf, 1 << 16, IBC_XPORT_ACCESS_ALL, &mr3, &hit3);
	if (rc == IBC_OK) {
		ibc_regcache_put(c, mr3);
		rc = ibc_regcache_get(c, other, 1 << 12, IBC_XPORT_ACCESS_ALL, &mr1, &hit4);
	}
	if (rc == IBC_OK) {
		ibc_regcache_put(c, mr1);
		rc = ibc_regcache_get(c, buf + 8, 8, IBC_XPORT_ACCESS_ALL, &mr2, NULL);
		ibc_regcache_put(c, mr2);
	}
	ibc_regcache_stats_get(c, &st);
	out[0] = (uint64_t)hit1;
	out[1] = (uint64_t)hit2;
	out[2] = inval_busy == IBC_ERR_INVAL;
	out[3] = (uint64_t)hit3;
	out[4] = (uint64_t)hit4;
	out[5] = st.hits;
	out[6] = st.misses;
	out[7] = st.invalidations;
	out[8] = st.entries;
	(void)ibc_regcache_close(c);
	free(buf);
	free(other);
	if (ibc_xport_close(x) && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

static void test_regcache(void)
{
	struct ibc_boot *boot = NULL;
	uint64_t v[9] = { 0 };
	int rc = ibc_boot_single_open(&boot);

	if (rc == IBC_OK)
		rc = do_regcache(boot, v);
	if (boot)
		(void)ibc_boot_close(boot);
	tap_is_int(rc, IBC_OK, "regcache: the sequence runs");
	tap_ok(v[0] == 0 && v[1] == 1, "regcache: first get misses, a range inside it hits");
	tap_ok(v[2] == 1, "regcache: invalidating a range in use is refused");
	tap_ok(v[3] == 0 && v[7] == 1, "regcache: after invalidation the same buffer misses again");
	tap_ok(v[4] == 0 && v[8] <= 2, "regcache: capacity 2 holds (%llu entries)",
	       (unsigned long long)v[8]);
	tap_ok(v[5] == 2 && v[6] == 3, "regcache: 2 hits, 3 misses counted (%llu, %llu)",
	       (unsigned long long)v[5], (unsigned long long)v[6]);
}

/* The paper's equations, evaluated by hand for known parameters. */
static void test_model(void)
{
	struct ibc_alltoall_model md;
	const char *eq = NULL;

	memset(&md, 0, sizeof(md));
	md.valid = 1;
	md.ranks = 8;
	md.ts = 1;
	md.tw = 0.001;
	md.ts2 = 2;
	md.trndz = 5;
	md.tcreg = 10;
	md.twreg = 0.0001;
	tap_is_double_within(ibc_alltoall_model_literal(&md, "hrwg", 8, 100, 8192, 1, &eq), 4.2, 1e-9,
			     "model eq. 1: hrwg p=8 m=100 = (ts + tw m p/2) log2 p = 4.2");
	tap_ok(eq && strcmp(eq, "1") == 0, "... named eq. 1");
	tap_is_double_within(ibc_alltoall_model_literal(&md, "bruck", 5, 10, 8192, 1, NULL), 6.05,
			     1e-9, "model eq. 1 on Bruck's rounds: p=5 moves 2, 2, 1 blocks = 6.05");
	tap_ok(ibc_alltoall_model_literal(&md, "hypercube", 6, 10, 8192, 1, NULL) < 0,
	       "model: no hypercube at p=6");
	tap_is_double_within(ibc_alltoall_model_literal(&md, "pairwise", 4, 100, 8192, 1, &eq), 6.3,
			     1e-9, "model eq. 2: pairwise eager p=4 m=100 = 6.3");
	tap_is_double_within(ibc_alltoall_model_literal(&md, "direct", 4, 100, 8192, 1, &eq), 15.3,
			     1e-9, "model eq. 3 with reuse: direct p=4 m=100 = 15.3");
	tap_is_double_within(ibc_alltoall_model_literal(&md, "direct", 4, 100, 8192, 0, NULL), 45.33,
			     1e-9, "model eq. 3 without reuse adds (p-1)(tcreg + m twreg) = 45.33");
	tap_is_double_within(ibc_alltoall_model_literal(&md, "de", 4, 100, 8192, 1, &eq), 0.3, 1e-9,
			     "model eq. 4 with reuse: tw m (p-1) = 0.3");
	tap_is_double_within(ibc_alltoall_model_literal(&md, "de", 4, 100, 8192, 0, NULL), 10.33,
			     1e-9, "model eq. 4 without reuse adds tcreg + (p-1) m twreg = 10.33");
	tap_ok(ibc_alltoall_model_literal(&md, "mpi", 4, 100, 8192, 1, NULL) < 0,
	       "model: none for a variant it does not know");
	md.valid = 0;
	tap_ok(ibc_alltoall_model_predict(&md, "hrwg", 4, 100, 8192, 1, NULL) < 0,
	       "model: none without measured parameters");
}

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtol(s, NULL, 10) : dflt;
}

int main(void)
{
	static const int ns[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16 };
	static const size_t sizes[] = { 1, 7, 32, 256, 4096, 65536 + 24, 1 << 20 };
	const char *e = getenv("IBC_TEST_XPORT");
	long nmax = env_long("IBC_TEST_A2A_NMAX", 16);
	size_t maxsize = (size_t)env_long("IBC_TEST_A2A_MAXSIZE", 1 << 20);
	size_t a, k, i;

	if (e && *e)
		backend = e;
	calls_per_size = env_long("IBC_TEST_A2A_CALLS", 12);
	ncores = sysconf(_SC_NPROCESSORS_ONLN);
	tap_plan_none();
	test_regcache();
	test_model();
	for (a = 0; a < ibc_alltoall_alg_count(); a++) {
		const char *alg = ibc_alltoall_alg_get(a)->name;

		for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			struct tcase tc = { .alg = alg, .n = ns[k] };

			if (ns[k] > nmax)
				continue;
			tc.sizes = sizes;
			tc.nsizes = sizeof(sizes) / sizeof(sizes[0]);
			/* the sizes are ascending: drop those above the cap */
			for (i = 0; i < tc.nsizes && tc.sizes[i] <= maxsize; i++)
				;
			tc.nsizes = i > 0 ? i : 1;
			check_case(&tc);
		}
	}
	check_mutant("hrwg", 4, IBC_ALLTOALL_MUTANT_NO_TAIL_WAIT, "no tail-flag wait");
	check_mutant("hrwg", 5, IBC_ALLTOALL_MUTANT_NO_TAIL_WAIT, "no tail-flag wait");
	check_mutant("hrwg", 4, IBC_ALLTOALL_MUTANT_ONE_HALF, "one half for every call");
	check_mutant("hrwg", 6, IBC_ALLTOALL_MUTANT_ONE_HALF, "one half for every call");
	return tap_done();
}
