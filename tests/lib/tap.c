#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failed, tap_planned = -1;

static void tap_line(int pass, const char *directive, const char *fmt, va_list ap)
{
	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	if (directive)
		printf(" # %s", directive);
	printf("\n");
	fflush(stdout);
}

void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

void tap_plan_none(void) { tap_planned = -1; }

int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, NULL, fmt, ap);
	va_end(ap);
	return cond;
}

int tap_is_int(long long got, long long want, const char *fmt, ...)
{
	va_list ap;
	int pass = got == want;

	va_start(ap, fmt);
	tap_line(pass, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got: %lld\n#  want: %lld\n", got, want);
	return pass;
}

int tap_is_double_within(double got, double want, double tol, const char *fmt, ...)
{
	va_list ap;
	double d = got - want;
	int pass = (d < 0 ? -d : d) <= tol;

	va_start(ap, fmt);
	tap_line(pass, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got: %.12g\n#  want: %.12g (+- %g)\n", got, want, tol);
	return pass;
}

int tap_is_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list ap;
	int pass = got && want ? strcmp(got, want) == 0 : got == want;

	va_start(ap, fmt);
	tap_line(pass, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got: '%s'\n#  want: '%s'\n", got ? got : "(null)", want ? want : "(null)");
	return pass;
}

void tap_skip(int n, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (int i = 0; i < n; i++) {
		tap_count++;
		printf("ok %d # SKIP %s\n", tap_count, why);
	}
	fflush(stdout);
}

void tap_skip_all(const char *fmt, ...)
{
	va_list ap;

	printf("1..0 # SKIP ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(0);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void tap_bail_out(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(255);
}

int tap_failures(void) { return tap_failed; }

int tap_done(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_count);
	else if (tap_planned != tap_count)
		printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
	fflush(stdout);
	return tap_failed || (tap_planned >= 0 && tap_planned != tap_count) ? 1 : 0;
}
