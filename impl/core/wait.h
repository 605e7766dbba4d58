/* The wait strategy of a process (DESIGN.md "Wait strategy"), one definition
 * for the harness, the transports and the algorithms: pinned and not
 * oversubscribed -> pure spin; oversubscribed -> spin IBC_WAIT_SPIN_POLLS
 * polls, then sched_yield between polls.  Recorded in every result row. */
#ifndef IBC_CORE_WAIT_H
#define IBC_CORE_WAIT_H

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

#endif
