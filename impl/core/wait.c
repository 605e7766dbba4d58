#include "core/wait.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_CLOCK_EVERY 256   /* polls between clock reads when a timeout is set */
#define WAIT_PROGRESS_EVERY 64 /* polls between progress calls */

static const int *abort_flag;

void ibc_wait_abort_watch(const int *flag)
{
	abort_flag = flag;
}

int ibc_wait_aborted(void)
{
	return abort_flag != NULL && __atomic_load_n(abort_flag, __ATOMIC_RELAXED) != 0;
}

const char *ibc_wait_name(enum ibc_wait w)
{
	return w == IBC_WAIT_SPIN_YIELD ? "spin-yield" : "spin";
}

int ibc_wait_parse(const char *name, enum ibc_wait *out)
{
	if (name == NULL)
		return IBC_ERR_INVAL;
	if (strcmp(name, "spin") == 0) {
		*out = IBC_WAIT_SPIN;
		return IBC_OK;
	}
	if (strcmp(name, "spin-yield") == 0 || strcmp(name, "spin_yield") == 0 ||
	    strcmp(name, "yield") == 0) {
		*out = IBC_WAIT_SPIN_YIELD;
		return IBC_OK;
	}
	return IBC_ERR_INVAL;
}

enum ibc_wait ibc_wait_decide(int local_ranks)
{
	const char *env = getenv("IBCHAR_WAIT"), *spins = getenv("IBCHAR_WAIT_SPINS");
	enum ibc_wait w;

	if (spins != NULL && spins[0] != '\0') {
		char *end;
		unsigned long n = strtoul(spins, &end, 10);

		static int warned;

		if (*end == '\0' && spins[0] != '-')
			ibc_wait_spin_polls_set(n);
		else if (!warned++)
			ibc_warn("IBCHAR_WAIT_SPINS=%s is not a number of polls; keeping %d", spins,
				 IBC_WAIT_SPIN_POLLS);
	}

	if (env != NULL && env[0] != '\0') {
		if (ibc_wait_parse(env, &w) == IBC_OK)
			return w;
		ibc_warn("IBCHAR_WAIT=%s is not spin or spin-yield; deciding from the topology", env);
	}
	return ibc_topo_oversubscribed(local_ranks) == 1 ? IBC_WAIT_SPIN_YIELD : IBC_WAIT_SPIN;
}

static unsigned long spin_polls = IBC_WAIT_SPIN_POLLS;

void ibc_wait_spin_polls_set(unsigned long n)
{
	spin_polls = n;
}

void ibc_wait_relax(enum ibc_wait w, unsigned long *polls)
{
	(*polls)++;
	if (w == IBC_WAIT_SPIN_YIELD && *polls >= spin_polls)
		sched_yield();
	else
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		__asm__ __volatile__("" ::: "memory");
#endif
}

int ibc_wait_check(struct ibc_wait_deadline *d)
{
	int64_t now;

	if (ibc_wait_aborted())
		return IBC_ERR_INTERRUPTED;
	if (d->timeout_ns < 0)
		return IBC_OK;
	now = ibc_timer_mono_ns();
	if (d->at_ns == 0) {
		d->at_ns = now + d->timeout_ns;
		return IBC_OK;
	}
	return now >= d->at_ns ? IBC_ERR_TIMEOUT : IBC_OK;
}

int ibc_wait_u64(const uint64_t *addr, uint64_t target, enum ibc_wait w, int64_t timeout_ns,
		 int (*progress)(void *arg), void *arg, uint64_t *seen)
{
	struct ibc_wait_deadline deadline = IBC_WAIT_DEADLINE(timeout_ns);
	unsigned long polls = 0;
	uint64_t v;
	int rc = IBC_OK;

	for (;;) {
		v = __atomic_load_n(addr, __ATOMIC_ACQUIRE);
		if (v >= target)
			break;
		ibc_wait_relax(w, &polls);
		if (progress != NULL && polls % WAIT_PROGRESS_EVERY == 0) {
			rc = progress(arg);
			if (rc != IBC_OK)
				break;
		}
		if (polls % WAIT_CLOCK_EVERY == 0 && (rc = ibc_wait_check(&deadline)) != IBC_OK)
			break;
	}
	if (seen != NULL)
		*seen = v;
	return rc;
}

int ibc_wait_u8_eq(const volatile uint8_t *addr, uint8_t want, enum ibc_wait w, int64_t timeout_ns)
{
	struct ibc_wait_deadline deadline = IBC_WAIT_DEADLINE(timeout_ns);
	unsigned long polls = 0;
	int rc;

	while (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != want) {
		ibc_wait_relax(w, &polls);
		if (polls % WAIT_CLOCK_EVERY == 0 && (rc = ibc_wait_check(&deadline)) != IBC_OK)
			return rc;
	}
	return IBC_OK;
}
