/* The wait strategy of a process (DESIGN.md "Wait strategy"), one definition
 * for the harness, the transports and the algorithms: pinned and not
 * oversubscribed -> pure spin; oversubscribed -> spin IBC_WAIT_SPIN_POLLS
 * polls, then sched_yield between polls.  Recorded in every result row. */
#ifndef IBC_CORE_WAIT_H
#define IBC_CORE_WAIT_H

#include <stdint.h>

enum ibc_wait {
	IBC_WAIT_SPIN = 0,
	IBC_WAIT_SPIN_YIELD = 1
};
#define IBC_WAIT_SPIN_POLLS 100

/* "spin" or "spin-yield"; never NULL */
const char *ibc_wait_name(enum ibc_wait w);
/* "spin", "spin-yield" (also "spin_yield", "yield"); IBC_ERR_INVAL otherwise */
int ibc_wait_parse(const char *name, enum ibc_wait *out);
/* The strategy for local_ranks processes on this host: spin-yield when they
 * outnumber the PUs available; $IBCHAR_WAIT=spin|spin-yield forces one. */
enum ibc_wait ibc_wait_decide(int local_ranks);
/* One unsuccessful poll of a wait loop; *polls counts from 0 per wait. */
void ibc_wait_relax(enum ibc_wait w, unsigned long *polls);

/* Waits until the 64-bit word at addr (written by other processes or a NIC)
 * is >= target (unsigned), loading with acquire, relaxing with w.
 * timeout_ns < 0: forever, else IBC_ERR_TIMEOUT after it.  progress (may be
 * NULL) is called every few polls with arg; its non-OK status ends the wait.
 * *seen (may be NULL) = the last value read.  The one such loop of ibchar:
 * the transports' ibc_xport_wait_u64 and the harness's node sync use it. */
int ibc_wait_u64(const uint64_t *addr, uint64_t target, enum ibc_wait w, int64_t timeout_ns,
		 int (*progress)(void *arg), void *arg, uint64_t *seen);

#endif
