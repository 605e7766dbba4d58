/* Helpers shared by the launcher's C tests (header only). */
#ifndef IBC_TEST_LAUNCH_UTIL_H
#define IBC_TEST_LAUNCH_UTIL_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* $IBC_BUILD/bin/ibchar-launch, else relative to this test binary. */
static inline void lt_launcher(const char *argv0, char *out, size_t n)
{
	const char *b = getenv("IBC_BUILD");
	char tmp[PATH_MAX];

	if (b != NULL && *b != '\0') {
		snprintf(out, n, "%s/bin/ibchar-launch", b);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s", argv0);
	snprintf(out, n, "%s/../../bin/ibchar-launch", dirname(tmp));
}

static inline void lt_self(const char *argv0, char *out, size_t n)
{
	if (realpath(argv0, out) == NULL)
		snprintf(out, n, "%s", argv0);
}

/* Runs a shell command; returns its exit status (128+N for signal N). */
static inline int lt_run(const char *cmd)
{
	int st = system(cmd);

	if (st == -1)
		return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* 1 when namespaces can be used: root, ip netns works and the test hosts
 * script exists; else 0 with the reason. */
static inline int lt_netns_ok(char *why, size_t n)
{
	if (geteuid() != 0) {
		snprintf(why, n, "not root");
		return 0;
	}
	if (lt_run("ip netns list >/dev/null 2>&1") != 0) {
		snprintf(why, n, "'ip netns' unavailable");
		return 0;
	}
	if (access("scripts/testhosts", X_OK) != 0) {
		snprintf(why, n, "scripts/testhosts not found (run from the source tree)");
		return 0;
	}
	return 1;
}

#endif
