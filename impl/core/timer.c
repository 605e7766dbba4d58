/* Timer: invariant TSC calibrated against CLOCK_MONOTONIC, else
 * clock_gettime(CLOCK_MONOTONIC).  See timer.h. */
#include "core/timer.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define CALIB_ROUNDS 5
#define CALIB_NS 20000000LL   /* 20 ms per round */
#define CALIB_MAX_BRACKET_NS 20000 /* retry a reading bracketed by a longer gap */

static pthread_once_t timer_once = PTHREAD_ONCE_INIT;
static volatile int timer_ready;
static enum ibc_timer_source timer_src = IBC_TIMER_CLOCK;
static double tsc_ghz;        /* ticks per ns */
static double tsc_us_per_tick; /* 1 / (ticks per us) */

static inline uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#if HAVE_TSC
static inline uint64_t tsc_read(void)
{
	/* lfence keeps earlier loads from drifting past the read */
	_mm_lfence();
	return __rdtsc();
}

/* CPUID 0x80000007 EDX bit 8: invariant TSC (Linux's constant_tsc +
 * nonstop_tsc): constant rate in every P-, C- and T-state. */
static int tsc_invariant(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (__get_cpuid_max(0x80000000U, NULL) < 0x80000007U)
		return 0;
	if (!__get_cpuid(0x80000007U, &eax, &ebx, &ecx, &edx))
		return 0;
	return (edx >> 8) & 1U;
}

/* One pair (clock ns, tsc) read close together: the clock read twice around
 * the TSC read, kept only when the two clock reads are close. */
static void pair_read(uint64_t *ns, uint64_t *tsc)
{
	uint64_t a, b, t;

	for (int tries = 0; tries < 100; tries++) {
		a = clock_ns();
		t = tsc_read();
		b = clock_ns();
		if (b - a <= CALIB_MAX_BRACKET_NS)
			break;
	}
	*ns = a + (b - a) / 2;
	*tsc = t;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Ticks per ns: the median of CALIB_ROUNDS rounds of CALIB_NS each. */
static double tsc_calibrate(void)
{
	double rate[CALIB_ROUNDS];

	for (int r = 0; r < CALIB_ROUNDS; r++) {
		uint64_t ns0, ns1, t0, t1;
		struct timespec req = { 0, CALIB_NS };

		pair_read(&ns0, &t0);
		while (nanosleep(&req, &req) != 0 && errno == EINTR)
			;
		pair_read(&ns1, &t1);
		rate[r] = ns1 > ns0 && t1 > t0 ? (double)(t1 - t0) / (double)(ns1 - ns0) : 0.0;
	}
	qsort(rate, CALIB_ROUNDS, sizeof(rate[0]), cmp_double);
	if (rate[CALIB_ROUNDS - 1] - rate[0] > 0.01 * rate[CALIB_ROUNDS / 2])
		ibc_debug("timer: TSC calibration rounds spread %.4f..%.4f GHz",
			  rate[0], rate[CALIB_ROUNDS - 1]);
	return rate[CALIB_ROUNDS / 2];
}
#endif

static void timer_choose(void)
{
	const char *env = getenv("IBCHAR_TIMER");
	int want_clock = 0, want_tsc = 0;

	if (env && *env) {
		if (strcmp(env, "clock") == 0 || strcmp(env, "clock_gettime") == 0)
			want_clock = 1;
		else if (strcmp(env, "tsc") == 0)
			want_tsc = 1;
		else if (strcmp(env, "auto") != 0)
			ibc_warn("IBCHAR_TIMER=%s is not one of auto, tsc, clock; using auto", env);
	}

	timer_src = IBC_TIMER_CLOCK;
	tsc_ghz = 0.0;
	if (want_clock) {
		ibc_info("timer: clock_gettime (forced by IBCHAR_TIMER)");
		return;
	}
#if HAVE_TSC
	if (!tsc_invariant()) {
		if (want_tsc)
			ibc_warn("timer: IBCHAR_TIMER=tsc but the TSC is not invariant; using clock_gettime");
		else
			ibc_info("timer: no invariant TSC; using clock_gettime");
		return;
	}
	{
		double ghz = tsc_calibrate();

		if (!(ghz > 0.05 && ghz < 20.0)) {
			ibc_warn("timer: TSC calibration gave %.4f GHz; using clock_gettime", ghz);
			return;
		}
		tsc_ghz = ghz;
		tsc_us_per_tick = 1.0 / (ghz * 1000.0);
		timer_src = IBC_TIMER_TSC;
		ibc_info("timer: invariant TSC at %.6f GHz", ghz);
	}
#else
	if (want_tsc)
		ibc_warn("timer: IBCHAR_TIMER=tsc but this CPU has no TSC; using clock_gettime");
#endif
}

static void timer_once_fn(void)
{
	timer_choose();
	__atomic_store_n(&timer_ready, 1, __ATOMIC_RELEASE);
}

int ibc_timer_init(void)
{
	pthread_once(&timer_once, timer_once_fn);
	return IBC_OK;
}

static inline void timer_ensure(void)
{
	if (__builtin_expect(!__atomic_load_n(&timer_ready, __ATOMIC_ACQUIRE), 0))
		ibc_timer_init();
}

enum ibc_timer_source ibc_timer_source(void)
{
	timer_ensure();
	return timer_src;
}

const char *ibc_timer_source_name(void)
{
	return ibc_timer_source() == IBC_TIMER_TSC ? "tsc" : "clock_gettime";
}

double ibc_timer_tsc_ghz(void)
{
	timer_ensure();
	return timer_src == IBC_TIMER_TSC ? tsc_ghz : 0.0;
}

void ibc_timer_tsc_ghz_set(double ghz)
{
	timer_ensure();
	if (timer_src != IBC_TIMER_TSC || !(ghz > 0.05 && ghz < 20.0))
		return;
	tsc_ghz = ghz;
	tsc_us_per_tick = 1.0 / (ghz * 1000.0);
}

uint64_t ibc_timer_ticks(void)
{
	timer_ensure();
#if HAVE_TSC
	if (timer_src == IBC_TIMER_TSC)
		return tsc_read();
#endif
	return clock_ns();
}

int64_t ibc_timer_mono_ns(void)
{
	return (int64_t)clock_ns();
}

double ibc_timer_ticks_to_us(uint64_t ticks)
{
	timer_ensure();
	if (timer_src == IBC_TIMER_TSC)
		return (double)ticks * tsc_us_per_tick;
	return (double)ticks / 1000.0;
}

double ibc_timer_now_us(void)
{
	return ibc_timer_ticks_to_us(ibc_timer_ticks());
}

void ibc_timer_spin_us(double us)
{
	uint64_t start, need;

	if (!(us > 0.0))
		return;
	timer_ensure();
	start = ibc_timer_ticks();
	need = timer_src == IBC_TIMER_TSC ? (uint64_t)(us * tsc_ghz * 1000.0)
					  : (uint64_t)(us * 1000.0);
	while (ibc_timer_ticks() - start < need)
		;
}
