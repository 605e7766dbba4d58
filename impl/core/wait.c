#include "core/wait.h"
#include "core/log.h"
#include "core/status.h"
#include "core/topo.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

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
	const char *env = getenv("IBCHAR_WAIT");
	enum ibc_wait w;

	if (env != NULL && env[0] != '\0') {
		if (ibc_wait_parse(env, &w) == IBC_OK)
			return w;
		ibc_warn("IBCHAR_WAIT=%s is not spin or spin-yield; deciding from the topology", env);
	}
	return ibc_topo_oversubscribed(local_ranks) == 1 ? IBC_WAIT_SPIN_YIELD : IBC_WAIT_SPIN;
}

void ibc_wait_relax(enum ibc_wait w, unsigned long *polls)
{
	(*polls)++;
	if (w == IBC_WAIT_SPIN_YIELD && *polls >= IBC_WAIT_SPIN_POLLS)
		sched_yield();
	else
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		__asm__ __volatile__("" ::: "memory");
#endif
}
