/* The wait strategy of a process (docs/design.md "Wait strategy"), one definition
 * for the harness, the transports and the algorithms: pinned and not
 * oversubscribed -> pure spin; oversubscribed -> spin IBC_WAIT_SPIN_POLLS
 * polls, then sched_yield between polls.  Recorded in every result row.
 *
 * Why yield after one poll: with more ranks than PUs, the rank a waiter
 * waits for is often not running, and every poll spent spinning is the
 * PU's time taken from it.  Measured with the barrier suite against Open
 * MPI's MPI_Barrier (which yields in every idle progress loop) under
 * mpirun --oversubscribe, N = 4..16 on 2 PUs: 100 polls before the first
 * yield made RDS 1.2-1.8x slower than MPI_Barrier back to back; 0, 1, 2 or 4
 * polls all made it faster at N = 8..16; 1 is kept (the runs are not stored;
 * docs/design.md, "Wait strategy", states the rule).  One waiter departs
 * from it: an RGM parent spins, bounded, for its children on other PUs once
 * all the ranks pinned to its own PU are in (barrier_rgm.c). */
#ifndef IBC_CORE_WAIT_H
#define IBC_CORE_WAIT_H

#include <stdint.h>

enum ibc_wait {
	IBC_WAIT_SPIN = 0,
	IBC_WAIT_SPIN_YIELD = 1
};
#define IBC_WAIT_SPIN_POLLS 1

/* "spin" or "spin-yield"; never NULL */
const char *ibc_wait_name(enum ibc_wait w);
/* "spin", "spin-yield" (also "spin_yield", "yield"); IBC_ERR_INVAL otherwise */
int ibc_wait_parse(const char *name, enum ibc_wait *out);
/* The strategy for local_ranks processes on this host: spin-yield when they
 * outnumber the PUs available; $IBCHAR_WAIT=spin|spin-yield forces one. */
enum ibc_wait ibc_wait_decide(int local_ranks);
/* The polls spin-yield spins before it yields (default IBC_WAIT_SPIN_POLLS;
 * $IBCHAR_WAIT_SPINS, read by ibc_wait_decide). */
void ibc_wait_spin_polls_set(unsigned long n);
/* One unsuccessful poll of a wait loop; *polls counts from 0 per wait. */
void ibc_wait_relax(enum ibc_wait w, unsigned long *polls);

/* The job's abort flag, when the bootstrap has one in shared memory (fork:
 * its region's word, set by any rank that aborts or by rank 0 when a child
 * dies).  Every wait loop of ibchar checks it now and then (ibc_wait_u64,
 * the transports' completion waits, the barrier waits, the harness's
 * window waits) and returns IBC_ERR_INTERRUPTED once it is set, so a failure
 * on one rank ends the other ranks' waits at once, not at their deadlines.
 * NULL = none (bootstraps whose job ends by signals: launcher, MPI). */
void ibc_wait_abort_watch(const int *flag);
/* 1 once the watched flag is set. */
int ibc_wait_aborted(void);
/* A wait loop's deadline.  The clock is first read at the loop's first
 * check, not on entry: a wait that ends before it (the common case of a
 * latency kernel) reads no clock, which costs ~20 ns on hardware and ~0.7 us
 * in a TCG guest whose clocksource is the HPET.  The timeout so runs from
 * the first check, some polls late. */
struct ibc_wait_deadline {
	int64_t timeout_ns;  /* < 0: none */
	int64_t at_ns;       /* 0 until the first check */
};
#define IBC_WAIT_DEADLINE(timeout) ((struct ibc_wait_deadline){ .timeout_ns = (timeout) })
/* A wait loop's periodic check (every some polls): IBC_ERR_INTERRUPTED once
 * the job aborted, IBC_ERR_TIMEOUT once the monotonic clock is past the
 * deadline, else IBC_OK. */
int ibc_wait_check(struct ibc_wait_deadline *d);

/* Waits until the 64-bit word at addr (written by other processes or a NIC)
 * is >= target (unsigned), loading with acquire, relaxing with w.
 * timeout_ns < 0: forever, else IBC_ERR_TIMEOUT after it.  progress (may be
 * NULL) is called every few polls with arg; its non-OK status ends the wait;
 * IBC_ERR_INTERRUPTED once the job's abort flag is set.
 * *seen (may be NULL) = the last value read.  The transports'
 * ibc_xport_wait_u64 and the harness's node sync use it. */
int ibc_wait_u64(const uint64_t *addr, uint64_t target, enum ibc_wait w, int64_t timeout_ns,
		 int (*progress)(void *arg), void *arg, uint64_t *seen);

/* Waits until the byte at addr (written by a peer or a NIC) equals want:
 * for kernels that poll the last byte of a payload, as perftest does (a
 * transport does not promise the last byte lands last; see xport.h).
 * Same strategy, timeout and abort handling as ibc_wait_u64. */
int ibc_wait_u8_eq(const volatile uint8_t *addr, uint8_t want, enum ibc_wait w, int64_t timeout_ns);

#endif
