/* Timer: the TSC when the CPU has an invariant TSC (calibrated against
 * CLOCK_MONOTONIC), else clock_gettime(CLOCK_MONOTONIC).  The choice is made
 * once, by ibc_timer_init(), and recorded in every run's meta.csv. */
#ifndef IBC_CORE_TIMER_H
#define IBC_CORE_TIMER_H

#include <stdint.h>

enum ibc_timer_source { IBC_TIMER_CLOCK = 0, IBC_TIMER_TSC = 1 };

/* Chooses and calibrates the source; idempotent; call before fork so every
 * process shares the calibration.  IBCHAR_TIMER=clock forces clock_gettime. */
int ibc_timer_init(void);
enum ibc_timer_source ibc_timer_source(void);
const char *ibc_timer_source_name(void);   /* "tsc" or "clock_gettime" */
double ibc_timer_tsc_ghz(void);             /* calibrated TSC rate, 0 if unused */
/* Adopts another process's calibration (the TSC source only; no-op
 * otherwise): processes of one node that calibrated separately differ by a
 * few ppm, which over the TSC's count since boot is milliseconds apart in
 * absolute time.  The global clock makes a node's ranks share their
 * leader's (gclock.c). */
void ibc_timer_tsc_ghz_set(double ghz);

uint64_t ibc_timer_ticks(void);             /* raw ticks of the chosen source */
double ibc_timer_ticks_to_us(uint64_t ticks);
double ibc_timer_now_us(void);              /* microseconds, arbitrary epoch */
/* CLOCK_MONOTONIC in nanoseconds, whatever the source: for deadlines and
 * timeouts (cheap enough per poll batch; no calibration needed). */
int64_t ibc_timer_mono_ns(void);
/* Busy-waits for us microseconds (used to inject delays in tests). */
void ibc_timer_spin_us(double us);

#endif
