/* JUnit XML for the verdicts of ibchar accept and ibchar compare: one
 * testsuite, a testcase per verdict, a failure element for those that fail
 * (the text as its message), the text as system-out otherwise.
 *
 * A JUnit file that cannot be written is the user's argument gone wrong:
 * both functions log one line, "SUITE: cannot write the JUnit file PATH:
 * REASON" (REASON from errno), and return IBC_ERR_INVAL, exit 2. */
#ifndef IBC_TOOLS_JUNIT_H
#define IBC_TOOLS_JUNIT_H

#include <stddef.h>

struct ibc_junit_case {
	const char *name, *text;
	int ok;
};

/* Whether path could be written, without creating it (a directory, a
 * missing or read-only parent, a read-only file): for a command to refuse
 * before it spends time on a run. */
int ibc_harness_junit_check(const char *path, const char *suite);
/* Writes path; a file left half-written is removed. */
int ibc_harness_junit_write(const char *path, const char *suite, const struct ibc_junit_case *c, size_t n);

#endif
