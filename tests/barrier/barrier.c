/* impl/barrier: every algorithm of the table on N = 1..9, 12, 16 ranks (fork
 * bootstrap), random delays before entry, back-to-back barriers checked by the
 * --validate helper (nobody leaves barrier k before everybody entered it);
 * RGM with injected multicast drops and every fan-in; two RGM instances in
 * turn for 1.5 send queues' worth of rounds (whatever
 * IBC_TEST_BARRIER_ITERS says); bad parameters.
 *
 * Environment:
 *   IBC_TEST_XPORT          transport backend (default shm; "verbs" in the
 *                           Soft-RoCE guest)
 *   IBC_TEST_BARRIER_ITERS  barriers per case (default 10000; 5000 for the
 *                           drop cases; the interleaved cases 500 and 200)
 *   IBC_TEST_BARRIER_NMAX   largest N to run (default 16; e.g. 4 in a TCG guest)
 *   IBC_TEST_BARRIER_FULL   1: 10000 per case everywhere, no time budget
 *   IBC_TEST_BARRIER_BUDGET seconds per case (default 1; 0 = none): after
 *                           at least 500 barriers, rank 0 stops a case that
 *                           ran out of time (between chunks of 250), so the
 *                           file stays bounded when other jobs load the VM */
#define _GNU_SOURCE
#include "barrier/barrier.h"
#include "pattern/pattern.h"
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"
#include "xport/xport.h"
#include "tap.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *backend = "shm";
static long ncores = 1;

struct tcase {
	const char *alg;
	int n;
	long iters;
	int fanin;          /* 0 = default */
	double drop;        /* multicast drop probability */
	double timeout_us;  /* RGM NAK timer, 0 = default */
	int delay_every;    /* 1 in delay_every barriers starts with a random delay */
	enum ibc_barrier_check_mode check; /* default AUTO (shared on one host) */
	int pin;            /* 1: rank r pinned to PU r mod 2, spin-yield */
	int spin;           /* RGM's spin plan: SPIN_SOME, SPIN_NONE, 0 = not checked */
};
#define SPIN_SOME 1
#define SPIN_NONE 2

struct tresult {
	int status;
	uint64_t violations;
	struct ibc_barrier_counters cnt;
	double seconds;
	long ran;   /* barriers run (the budget may stop a case early) */
	int yield;
};

#define CHUNK 250
#define MIN_ITERS 500
static double budget_s = 1.0;
static long total_ran;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The body every rank runs; returns a status. */
static int rank_body(struct ibc_boot *boot, const struct tcase *tc, struct tresult *res)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_barrier_params bp;
	struct ibc_barrier *b = NULL;
	struct ibc_barrier_check *chk = NULL;
	unsigned seed = 12345u + 7919u * (unsigned)boot->rank + (unsigned)tc->n * 31u;
	int rc, rc2;
	long k;

	ibc_xport_params_init(&xp);
	xp.backend = backend;
	/* spin then yield whenever ranks could outnumber free cores: the ranks
	 * > cores rule of docs/design.md, made stricter because this is a test on a
	 * machine shared with other jobs (a pure spin at N = cores under load
	 * costs a scheduler tick per step) */
	xp.wait = tc->n > 1 && tc->n >= ncores ? IBC_WAIT_SPIN_YIELD : IBC_WAIT_SPIN;
	if (tc->pin) {
		xp.wait = IBC_WAIT_SPIN_YIELD;
		rc = ibc_topo_pin(boot->rank % 2);
		if (rc)
			return rc;
	}
	xp.mcast_drop = tc->drop;
	xp.drop_seed = 42;
	res->yield = xp.wait == IBC_WAIT_SPIN_YIELD;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	ibc_barrier_params_init(&bp);
	bp.fanin = tc->fanin;
	if (tc->timeout_us > 0)
		bp.timeout_us = tc->timeout_us;
	bp.deadline_s = 20;
	rc = ibc_barrier_create(x, tc->alg, &bp, &b);
	if (rc)
		goto out_close_xport;
	rc = ibc_barrier_check_open(boot, x, tc->check, (size_t)tc->iters, &chk);
	if (rc)
		goto out_destroy;
	res->seconds = now_s();
	for (k = 0; k < tc->iters && rc == IBC_OK;) {
		long end = k + CHUNK < tc->iters ? k + CHUNK : tc->iters;
		int32_t stop = 0;

		for (; k < end; k++) {
			if (tc->delay_every > 0 && rand_r(&seed) % tc->delay_every == 0) {
				if (rand_r(&seed) % 8 == 0)
					sched_yield();
				else
					ibc_timer_spin_us((double)(rand_r(&seed) % 20));
			}
			ibc_barrier_check_enter(chk);
			rc = ibc_barrier_run(b);
			(void)ibc_barrier_check_exit(chk); /* counted, reported at close */
			if (rc)
				break;
		}
		/* the time budget: rank 0 decides for everyone, between chunks */
		if (rc == IBC_OK && budget_s > 0 && k >= MIN_ITERS && k < tc->iters) {
			stop = boot->rank == 0 && now_s() - res->seconds > budget_s;
			rc = ibc_boot_bcast(boot, &stop, sizeof(stop), 0);
			if (stop)
				break;
		}
	}
	res->ran = k;
	res->seconds = now_s() - res->seconds;
	if (rc) {
		/* the others may be waiting for us: end the job instead of hanging */
		ibc_boot_abort(boot, 1, "barrier failed");
		return rc;
	}
	rc = ibc_barrier_check_close(chk, &res->violations);
	rc2 = ibc_barrier_counters_sum(b, &res->cnt);
	if (!rc)
		rc = rc2;
out_destroy:
	rc2 = ibc_barrier_destroy(b);
	if (!rc)
		rc = rc2;
out_close_xport:
	rc2 = ibc_xport_close(x);
	if (!rc)
		rc = rc2;
	return rc;
}

/* Forks tc->n ranks; rank 0 (this process) returns the job's result. */
static void run_case(const struct tcase *tc, struct tresult *res)
{
	struct ibc_boot *boot = NULL;
	int rc, rc2;

	cpu_set_t cpus;

	memset(res, 0, sizeof(*res));
	fflush(stdout);
	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) {
		res->status = IBC_ERR_SYS;
		return;
	}
	rc = ibc_boot_fork_open(tc->n, &boot);
	if (rc) {
		res->status = rc;
		return;
	}
	rc = rank_body(boot, tc, res);
	if (boot->rank != 0) {
		rc2 = ibc_boot_close(boot);
		_exit(rc || rc2 ? 1 : 0);
	}
	rc2 = ibc_boot_close(boot);
	res->status = rc ? rc : rc2;
	if (tc->pin && sched_setaffinity(0, sizeof(cpus), &cpus) != 0 && res->status == IBC_OK)
		res->status = IBC_ERR_SYS; /* the next cases would run pinned */
}

static void check_case(const struct tcase *tc, int want_retransmits)
{
	struct tresult r;
	char extra[64] = "";

	run_case(tc, &r);
	total_ran += r.ran;
	if (tc->drop > 0)
		snprintf(extra, sizeof(extra), " drop %.0f%%", tc->drop * 100);
	else if (tc->check == IBC_BARRIER_CHECK_REMOTE)
		snprintf(extra, sizeof(extra), ", remote check");
	if (tc->pin)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 ", pinned 2 PUs round robin");
	if (!tap_ok(r.status == IBC_OK && r.violations == 0 && r.ran > 0 &&
		    r.cnt.barriers == (uint64_t)r.ran,
		    "%s N=%d fan-in %d%s: %ld of %ld barriers, nobody left early", tc->alg, tc->n,
		    tc->fanin, extra, r.ran, tc->iters))
		tap_diag("status %s, violations %llu, barriers %llu", ibc_status_str(r.status),
			 (unsigned long long)r.violations, (unsigned long long)r.cnt.barriers);
	else
		tap_diag("  %.2f s, %.2f us/barrier (%s)", r.seconds,
			 r.seconds * 1e6 / (double)(r.ran > 0 ? r.ran : 1), r.yield ? "spin_yield" : "spin");
	if (ibc_barrier_alg_find(tc->alg)->needs & IBC_BARRIER_NEEDS_MULTICAST)
		tap_diag("  naks=%llu retransmits=%llu duplicates=%llu pulls=%llu mcast_drops=%llu "
			 "gather_spins=%llu spin_timeouts=%llu",
			 (unsigned long long)r.cnt.naks, (unsigned long long)r.cnt.retransmits,
			 (unsigned long long)r.cnt.duplicates, (unsigned long long)r.cnt.pulls,
			 (unsigned long long)r.cnt.mcast_drops,
			 (unsigned long long)r.cnt.gather_spins,
			 (unsigned long long)r.cnt.spin_timeouts);
	if (tc->spin) {
		/* RGM's spin plan (barrier_rgm.c) */
		int want = tc->spin == SPIN_SOME;

		if (!tap_ok((r.cnt.gather_spins > 0) == want,
			    "%s N=%d fan-in %d%s: %s", tc->alg, tc->n, tc->fanin, extra,
			    want ? "a parent spun for its children on the other PU"
				 : "nobody spun for its children"))
			tap_diag("gather_spins %llu", (unsigned long long)r.cnt.gather_spins);
	}
	if (want_retransmits) {
		tap_ok(r.cnt.mcast_drops > 0, "%s N=%d%s: drops were injected (%llu)", tc->alg,
		       tc->n, extra, (unsigned long long)r.cnt.mcast_drops);
		tap_ok(r.cnt.retransmits > 0 && r.cnt.naks > 0,
		       "%s N=%d%s: losses recovered by NAK + retransmit (%llu NAKs, %llu "
		       "retransmits)", tc->alg, tc->n, extra, (unsigned long long)r.cnt.naks,
		       (unsigned long long)r.cnt.retransmits);
	}
}

/* Every algorithm interleaved on one transport (as the harness does): A B C
 * A B C ..., each checked; then a second round after destroying the first
 * instances, so the shared two-sided receive pool is drained and rebuilt. */
static int mixed_body(struct ibc_boot *boot, long iters)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_barrier *b[16] = { NULL };
	struct ibc_barrier_check *chk[16] = { NULL };
	size_t na = ibc_barrier_alg_count(), a;
	int round, rc = IBC_OK, rc2;
	long k;

	if (na > 16)
		na = 16;
	ibc_xport_params_init(&xp);
	xp.backend = backend;
	xp.wait = IBC_WAIT_SPIN_YIELD;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	for (round = 0; round < 2 && rc == IBC_OK; round++) {
		for (a = 0; a < na && rc == IBC_OK; a++) {
			rc = ibc_barrier_create(x, ibc_barrier_alg_get(a)->name, NULL, &b[a]);
			if (rc == IBC_OK)
				rc = ibc_barrier_check_open(boot, x, IBC_BARRIER_CHECK_AUTO,
							    (size_t)iters, &chk[a]);
		}
		for (k = 0; k < iters && rc == IBC_OK; k++)
			for (a = 0; a < na && rc == IBC_OK; a++) {
				ibc_barrier_check_enter(chk[a]);
				rc = ibc_barrier_run(b[a]);
				(void)ibc_barrier_check_exit(chk[a]);
			}
		if (rc) {
			ibc_boot_abort(boot, 1, "barrier failed");
			return rc;
		}
		for (a = 0; a < na; a++) {
			rc2 = chk[a] ? ibc_barrier_check_close(chk[a], NULL) : IBC_OK;
			chk[a] = NULL;
			if (!rc)
				rc = rc2;
			rc2 = ibc_barrier_destroy(b[a]);
			b[a] = NULL;
			if (!rc)
				rc = rc2;
		}
	}
	rc2 = ibc_xport_close(x);
	return rc ? rc : rc2;
}

static void check_mixed(int n, long iters)
{
	struct ibc_boot *boot = NULL;
	int rc, rc2;

	fflush(stdout);
	rc = ibc_boot_fork_open(n, &boot);
	if (rc == IBC_OK) {
		rc = mixed_body(boot, iters);
		if (boot->rank != 0) {
			rc2 = ibc_boot_close(boot);
			_exit(rc || rc2 ? 1 : 0);
		}
		rc2 = ibc_boot_close(boot);
		if (!rc)
			rc = rc2;
	}
	tap_ok(rc == IBC_OK, "N=%d: all algorithms interleaved on one transport, %ld rounds, "
	       "twice (status %s)", n, iters, ibc_status_str(rc));
}

/* Two RGM instances on one transport, run in turn (as the harness runs
 * --fanin 1,3), for more rounds than a send queue holds: each instance has
 * its own multicast group and so its own send queue (verbs: a UD QP), and
 * each must signal one post in every max_send_wr on it.  It once counted its
 * releases in the per-peer count the instances share, so one of the two
 * never signaled and its root hung after max_send_wr releases (verbs). */
static int rgm_pair_body(struct ibc_boot *boot, long *rounds, uint64_t *violations)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_barrier_params bp;
	struct ibc_barrier *b[2] = { NULL, NULL };
	struct ibc_barrier_check *chk[2] = { NULL, NULL };
	int i, rc, rc2;
	long k;

	ibc_xport_params_init(&xp);
	xp.backend = backend;
	xp.wait = IBC_WAIT_SPIN_YIELD;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	*rounds = (long)x->caps.max_send_wr * 3 / 2 + 1;
	for (i = 0; i < 2 && rc == IBC_OK; i++) {
		ibc_barrier_params_init(&bp);
		bp.fanin = i == 1 && boot->size > 3 ? 3 : 1;
		bp.deadline_s = 20;
		rc = ibc_barrier_create(x, "rgm", &bp, &b[i]);
		if (rc == IBC_OK)
			rc = ibc_barrier_check_open(boot, x, IBC_BARRIER_CHECK_AUTO, (size_t)*rounds,
						    &chk[i]);
	}
	for (k = 0; k < *rounds && rc == IBC_OK; k++)
		for (i = 0; i < 2 && rc == IBC_OK; i++) {
			ibc_barrier_check_enter(chk[i]);
			rc = ibc_barrier_run(b[i]);
			(void)ibc_barrier_check_exit(chk[i]);
		}
	if (rc) {
		ibc_boot_abort(boot, 1, "barrier failed");
		return rc;
	}
	*violations = 0;
	for (i = 0; i < 2; i++) {
		uint64_t v = 0;

		rc2 = ibc_barrier_check_close(chk[i], &v);
		*violations += v;
		if (!rc)
			rc = rc2;
		rc2 = ibc_barrier_destroy(b[i]);
		if (!rc)
			rc = rc2;
	}
	rc2 = ibc_xport_close(x);
	return rc ? rc : rc2;
}

static void check_rgm_pair(int n)
{
	struct ibc_boot *boot = NULL;
	uint64_t violations = 0;
	long rounds = 0;
	int rc, rc2;

	fflush(stdout);
	rc = ibc_boot_fork_open(n, &boot);
	if (rc == IBC_OK) {
		rc = rgm_pair_body(boot, &rounds, &violations);
		if (boot->rank != 0) {
			rc2 = ibc_boot_close(boot);
			_exit(rc || rc2 ? 1 : 0);
		}
		rc2 = ibc_boot_close(boot);
		if (!rc)
			rc = rc2;
	}
	tap_ok(rc == IBC_OK && violations == 0,
	       "N=%d: two rgm instances (fan-in 1, %d) in turn on one transport, %ld rounds, "
	       "more than a send queue holds (status %s, violations %llu)", n, n > 3 ? 3 : 1,
	       rounds, ibc_status_str(rc), (unsigned long long)violations);
}

/* Runs fn with stderr captured; returns what it logged (static buffer). */
static const char *stderr_of(int (*fn)(void *), void *arg, int *rc)
{
	static char buf[2048];
	FILE *tmp = tmpfile();
	int saved;
	size_t n = 0;

	buf[0] = '\0';
	fflush(stderr);
	saved = dup(2);
	if (!tmp || saved < 0) {
		*rc = fn(arg);
		return buf;
	}
	dup2(fileno(tmp), 2);
	*rc = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

/* tap_diag for each line of text. */
static void diag_lines(const char *prefix, const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		int len = nl ? (int)(nl - text) : (int)strlen(text);

		tap_diag("%s%.*s", prefix, len, text);
		text = nl ? nl + 1 : NULL;
	}
}

struct pcheck {
	const char *alg;
	int n, fanin;
	int resolved;
};

static int do_check(void *arg)
{
	struct pcheck *p = arg;
	struct ibc_barrier_params bp;

	ibc_barrier_params_init(&bp);
	bp.fanin = p->fanin;
	return ibc_barrier_params_check(ibc_barrier_alg_find(p->alg), p->n, &bp, &p->resolved);
}

static void check_params(const char *alg, int n, int fanin, int want_rc, const char *want_msg)
{
	struct pcheck p = { alg, n, fanin, -1 };
	const char *msg;
	int rc;

	msg = stderr_of(do_check, &p, &rc);
	tap_ok(rc == want_rc && (!want_msg || strstr(msg, want_msg)),
	       "%s N=%d fan-in %d: %s%s%s%s", alg, n, fanin, want_rc ? "rejected" : "accepted",
	       want_msg ? " saying '" : "", want_msg ? want_msg : "", want_msg ? "'" : "");
	if (want_msg && !strstr(msg, want_msg))
		diag_lines("logged: ", msg);
	else if (want_msg)
		diag_lines("  ", msg);
}

static void test_table(void)
{
	size_t i, j, n = ibc_barrier_alg_count();
	int ok = 1;
	char *list = NULL;
	size_t listlen = 0;
	FILE *f;

	tap_ok(n >= 5, "the table has %zu algorithms", n);
	for (i = 0; i < n; i++) {
		const struct ibc_barrier_alg *a = ibc_barrier_alg_get(i);

		if (!a->name || !a->desc || !a->needs || !a->tunables || !a->run || !a->setup ||
		    ibc_barrier_alg_find(a->name) != a)
			ok = 0;
		for (j = 0; j < i; j++)
			if (strcmp(ibc_barrier_alg_get(j)->name, a->name) == 0)
				ok = 0;
	}
	tap_ok(ok, "every entry has a unique name, a description, needs and tunables");
	tap_ok(ibc_barrier_alg_find("nope") == NULL, "unknown name: not found");
	tap_is_str(ibc_barrier_alg_names(), "rpe,rds,rgm,pe,ds", "names in table order");
	f = open_memstream(&list, &listlen);
	if (f) {
		ibc_barrier_list_print(f, 1);
		fclose(f);
	}
	tap_ok(list && strstr(list, "rgm") && strstr(list, "multicast") && strstr(list, "fanin") &&
	       strstr(list, "timeout"), "listing shows algorithms, needs and tunables");
	if (list)
		diag_lines("", list);
	free(list);
}

static int do_create_unknown(void *arg)
{
	struct ibc_barrier *b;

	(void)arg;
	return ibc_barrier_create(NULL, "bogus", NULL, &b);
}

/* The check itself must catch a barrier that does not synchronise: with a
 * no-op "barrier" rank 0 enters 20 ms late, so the others leave first. */
struct noop_arg {
	pid_t parent;
	enum ibc_barrier_check_mode mode;
};

static int noop_body(struct ibc_boot *boot, enum ibc_barrier_check_mode mode,
		     uint64_t *violations)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_barrier_check *chk;
	int rc, rc2, k;

	ibc_xport_params_init(&xp);
	xp.backend = backend;
	xp.wait = IBC_WAIT_SPIN_YIELD;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	rc = ibc_barrier_check_open(boot, x, mode, 4, &chk);
	if (rc == IBC_OK) {
		for (k = 0; k < 4; k++) {
			if (boot->rank == 0)
				ibc_timer_spin_us(20000);
			ibc_barrier_check_enter(chk);
			(void)ibc_barrier_check_exit(chk);
		}
		rc = ibc_barrier_check_close(chk, violations);
	}
	rc2 = ibc_xport_close(x);
	return rc ? rc : rc2;
}

static int do_noop(void *arg)
{
	const struct noop_arg *na = arg;
	struct ibc_boot *boot;
	uint64_t v = 0;
	int rc, rc2;

	fflush(stdout);
	rc = ibc_boot_fork_open(3, &boot);
	if (rc)
		return rc;
	rc = noop_body(boot, na->mode, &v);
	rc2 = ibc_boot_close(boot); /* frees boot */
	if (getpid() != na->parent)
		_exit(0);
	if (rc2)
		return rc2;
	return rc == IBC_ERR_VALIDATE && v > 0 ? IBC_OK : IBC_ERR_VALIDATE;
}

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : dflt;
}

int main(void)
{
	static const int ns[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16 };
	static const int fanins[] = { 1, 3, 7, 15 };
	const char *msg;
	long iters, nmax;
	size_t a, i;
	int rc;
	double t0 = now_s();

	ibc_log_init("barrier.t");
	if (getenv("IBC_TEST_XPORT") && *getenv("IBC_TEST_XPORT"))
		backend = getenv("IBC_TEST_XPORT");
	ncores = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncores < 1)
		ncores = 1;
	iters = env_long("IBC_TEST_BARRIER_ITERS", 0);
	nmax = env_long("IBC_TEST_BARRIER_NMAX", 16);
	if (nmax < 2)
		nmax = 2;
	if (getenv("IBC_TEST_BARRIER_BUDGET") && *getenv("IBC_TEST_BARRIER_BUDGET"))
		budget_s = strtod(getenv("IBC_TEST_BARRIER_BUDGET"), NULL);
	if (env_long("IBC_TEST_BARRIER_FULL", 0)) {
		iters = 10000;
		budget_s = 0;
	}
	tap_plan_none();
	if (iters > 0)
		tap_diag("transport %s, %ld cores, %ld barriers per case, budget %g s", backend,
			 ncores, iters, budget_s);
	else
		tap_diag("transport %s, %ld cores, 10000 barriers per case, budget %g s per case "
			 "(IBC_TEST_BARRIER_FULL=1: no budget)", backend, ncores, budget_s);

	/* ---------------------------------------------- table and parameters */
	test_table();
	check_params("rgm", 8, 4, IBC_ERR_INVAL, "not of the form 2^k - 1");
	check_params("rgm", 8, 6, IBC_ERR_INVAL, "not of the form 2^k - 1");
	check_params("rgm", 8, -1, IBC_ERR_INVAL, "not of the form 2^k - 1");
	check_params("rgm", 4, 7, IBC_OK, NULL); /* l >= N - 1: the flat gather */
	check_params("rgm", 8, 7, IBC_OK, NULL);
	check_params("rgm", 16, 15, IBC_OK, NULL);
	check_params("rgm", 1, 7, IBC_OK, NULL);
	for (a = 0; a < ibc_barrier_alg_count(); a++)
		check_params(ibc_barrier_alg_get(a)->name, 0, 0, IBC_ERR_INVAL, "N = 0");
	{
		struct pcheck p = { "rgm", 4, 0, -1 };

		(void)stderr_of(do_check, &p, &rc);
		tap_ok(rc == IBC_OK && p.resolved == 7,
		       "rgm N=4 default fan-in: 7 (the paper's, at every N)");
		p.n = 64;
		(void)stderr_of(do_check, &p, &rc);
		tap_ok(rc == IBC_OK && p.resolved == 7, "rgm N=64 default fan-in: 7");
	}
	{
		/* the flat gather: one write stage, then the release */
		struct ibc_pattern_round r[8];
		int k6 = ibc_barrier_alg_rounds("rgm", 6, 7, r, 8);
		int k6l3 = ibc_barrier_alg_rounds("rgm", 6, 3, r, 8);
		int k12 = ibc_barrier_alg_rounds("rgm", 12, 15, r, 8);

		tap_ok(k6 == 2 && k12 == 2 && k6l3 == 3,
		       "rgm fan-in 7 at N=6 and 15 at N=12 gather in one stage (rounds %d, %d), "
		       "fan-in 3 at N=6 in two (%d)", k6, k12, k6l3);
	}
	msg = stderr_of(do_create_unknown, NULL, &rc);
	tap_ok(rc == IBC_ERR_NOTFOUND && strstr(msg, "known: rpe,rds,rgm,pe,ds"),
	       "create of an unknown algorithm names the known ones");

	/* the remote check's verdict on a peer's entry count byte after barrier k */
	tap_ok(ibc_barrier_check_entry_ok(1, 0) && ibc_barrier_check_entry_ok(2, 0),
	       "remote check: after barrier 0 a peer's count 1 (in it) or 2 (in the next) is fine");
	tap_ok(!ibc_barrier_check_entry_ok(0, 0) && !ibc_barrier_check_entry_ok(3, 0) &&
	       !ibc_barrier_check_entry_ok(255, 0),
	       "... 0 (not entered), 3 (left the next one) and 255 are violations");
	tap_ok(ibc_barrier_check_entry_ok(0, 255) && ibc_barrier_check_entry_ok(1, 255) &&
	       ibc_barrier_check_entry_ok(255, 254) && ibc_barrier_check_entry_ok(0, 254) &&
	       !ibc_barrier_check_entry_ok(255, 255) && !ibc_barrier_check_entry_ok(254, 254),
	       "... and across the wrap of the byte (barriers 254, 255)");
	tap_ok(ibc_barrier_check_entry_ok((uint8_t)1001, 1000) &&
	       ibc_barrier_check_entry_ok((uint8_t)1002, 1000) &&
	       !ibc_barrier_check_entry_ok((uint8_t)1000, 1000) &&
	       !ibc_barrier_check_entry_ok((uint8_t)990, 1000),
	       "... and at barrier 1000 (one and ten barriers behind are caught)");
	{
		struct noop_arg na = { getpid(), IBC_BARRIER_CHECK_SHARED };

		msg = stderr_of(do_noop, &na, &rc);
		tap_ok(rc == IBC_OK && strstr(msg, "left"),
		       "the validation catches a no-op barrier (rank 0 enters 20 ms late)");
		diag_lines("  ", msg);
		na.mode = IBC_BARRIER_CHECK_REMOTE;
		msg = stderr_of(do_noop, &na, &rc);
		tap_ok(rc == IBC_OK && strstr(msg, "'s entry count read"),
		       "... and so does the remote check (counters read after each exit)");
		diag_lines("  ", msg);
	}

	/* ------------------------------------------ every algorithm, every N */
	for (a = 0; a < ibc_barrier_alg_count(); a++) {
		const char *alg = ibc_barrier_alg_get(a)->name;

		for (i = 0; i < sizeof(ns) / sizeof(ns[0]) && ns[i] <= nmax; i++) {
			long it = iters > 0 ? iters : 10000;
			struct tcase tc = { alg, ns[i], it, 0, 0, 0, 16, IBC_BARRIER_CHECK_AUTO, 0, 0 };

			check_case(&tc, 0);
		}
	}
	/* ---------- the remote check (used across hosts), here on one host */
	for (a = 0; a < ibc_barrier_alg_count(); a++) {
		static const int rn[] = { 3, 5 };

		for (i = 0; i < sizeof(rn) / sizeof(rn[0]) && rn[i] <= nmax; i++) {
			struct tcase tc = { ibc_barrier_alg_get(a)->name, rn[i],
					    iters > 0 ? iters : 2000, 0, 0, 0, 16,
					    IBC_BARRIER_CHECK_REMOTE, 0, 0 };

			check_case(&tc, 0);
		}
	}
	/* ------------------------------------- interleaved on one transport */
	check_mixed(nmax < 5 ? (int)nmax : 5, iters > 0 ? iters : 500);
	check_mixed(nmax < 8 ? (int)nmax : 8, iters > 0 ? iters / 2 + 1 : 200);
	check_rgm_pair(nmax < 4 ? (int)nmax : 4);

	/* ------------------------------------------------ RGM fan-in sweep */
	for (i = 0; i < sizeof(fanins) / sizeof(fanins[0]) && fanins[i] < nmax; i++) {
		struct tcase tc = { "rgm", (int)nmax, iters > 0 ? iters : 10000, fanins[i], 0, 0, 16,
				   IBC_BARRIER_CHECK_AUTO, 0, 0 };

		check_case(&tc, 0);
	}
	if (nmax >= 6) {
		/* the flat gather at an N that is no 2^k: l = 7 > N - 1 */
		struct tcase tc = { "rgm", 6, iters > 0 ? iters : 10000, 7, 0, 0, 16,
				    IBC_BARRIER_CHECK_AUTO, 0, 0 };

		check_case(&tc, 0);
	}
	if (nmax >= 8) {
		/* RGM's spin plan (barrier_rgm.c), ranks pinned two PUs round robin:
		 * the flat root's PU-mates are all its children, so it spins for the
		 * others (on shm; on verbs a write needs the receiving CPU); at N = 8,
		 * fan-in 1 every parent has a PU-mate that is not its child, and
		 * unpinned nobody knows: nobody spins.  With drops, the spinning
		 * root still answers NAKs. */
		struct ibc_topo_info ti;
		int some = ibc_topo_query(&ti) == IBC_OK && ti.allowed_pus >= 2 &&
			   strcmp(backend, "shm") == 0;
		long it = iters > 0 ? iters : 5000;
		struct tcase flat = { "rgm", 6, it, 7, 0, 0, 16, IBC_BARRIER_CHECK_AUTO, 1,
				      some ? SPIN_SOME : SPIN_NONE };
		struct tcase tree = { "rgm", 8, it, 1, 0, 0, 16, IBC_BARRIER_CHECK_AUTO, 1,
				      SPIN_NONE };
		struct tcase free_ = { "rgm", 6, it, 7, 0, 0, 16, IBC_BARRIER_CHECK_AUTO, 0,
				       SPIN_NONE };
		struct tcase drops = { "rgm", 6, it, 7, 0.1, 100, 16, IBC_BARRIER_CHECK_AUTO, 1,
				       some ? SPIN_SOME : SPIN_NONE };

		check_case(&flat, 0);
		check_case(&tree, 0);
		check_case(&free_, 0);
		if (strcmp(backend, "shm") == 0)
			check_case(&drops, 1);
		else
			tap_skip(4, "multicast drop injection exists only on shm");
	}
	/* ------------------------------------------ RGM with multicast drops */
	if (strcmp(backend, "shm") != 0) {
		tap_skip(9, "multicast drop injection exists only on shm");
	} else {
		long it = iters > 0 ? iters : 5000;
		int n8 = nmax < 8 ? (int)nmax : 8;
		struct tcase d5 = { "rgm", n8, it, n8 > 3 ? 3 : 1, 0.05, 100, 16,
				      IBC_BARRIER_CHECK_AUTO, 0, 0 };
		struct tcase d30 = { "rgm", n8, it, n8 > 7 ? 7 : 1, 0.30, 100, 16,
				      IBC_BARRIER_CHECK_AUTO, 0, 0 };
		struct tcase d30b = { "rgm", nmax < 5 ? (int)nmax : 5, it, 1, 0.30, 100, 16,
				      IBC_BARRIER_CHECK_AUTO, 0, 0 };

		check_case(&d5, 1);
		check_case(&d30, 1);
		check_case(&d30b, 1);
	}
	tap_diag("total %.1f s; %ld barriers checked", now_s() - t0, total_ran);
	return tap_done();
}
