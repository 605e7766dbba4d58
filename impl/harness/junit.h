/* JUnit XML for the verdicts of ibchar accept and ibchar compare: one
 * testsuite, a testcase per verdict, a failure element for those that fail
 * (the text as its message), the text as system-out otherwise. */
#ifndef IBC_HARNESS_JUNIT_H
#define IBC_HARNESS_JUNIT_H

#include <stddef.h>

struct ibc_junit_case {
	const char *name, *text;
	int ok;
};

/* Writes path; IBC_ERR_IO when it cannot. */
int ibc_harness_junit_write(const char *path, const char *suite, const struct ibc_junit_case *c, size_t n);

#endif
