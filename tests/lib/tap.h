/* A small TAP producer for C tests (after git's test-lib.h).
 *
 *   tap_plan(3);                        or tap_plan_none() and tap_done()
 *   tap_ok(x == 1, "x is one");
 *   tap_is_int(got, 4, "four ranks");
 *   tap_is_double_within(med, 2.5, 1e-9, "median");
 *   tap_skip(2, "no MPI");              counts as 2 passing tests
 *   tap_skip_all("not root");           prints "1..0 # SKIP" and exits 0
 *   return tap_done();                  exit status: 0 when all passed
 */
#ifndef IBC_TAP_H
#define IBC_TAP_H

#include <stdarg.h>

void tap_plan(int n);
void tap_plan_none(void); /* plan printed by tap_done() */
int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tap_is_int(long long got, long long want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int tap_is_double_within(double got, double want, double tol, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int tap_is_str(const char *got, const char *want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tap_skip(int n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_skip_all(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tap_bail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
int tap_failures(void);
int tap_done(void);

#endif
