/* JUnit XML: see junit.h. */
#include "tools/junit.h"
#include "tools/table.h"
#include "core/status.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cannot(const char *path, const char *suite, int err)
{
	fprintf(stderr, "%s: cannot write the JUnit file %s: %s\n", suite, path, strerror(err));
	return IBC_ERR_INVAL;
}

int ibc_harness_junit_check(const char *path, const char *suite)
{
	char parent[4096];
	struct stat st;

	if (path[0] == '\0')
		return cannot(path, suite, ENOENT);
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return cannot(path, suite, EISDIR);
		return access(path, W_OK) == 0 ? IBC_OK : cannot(path, suite, errno);
	}
	if (errno != ENOENT)
		return cannot(path, suite, errno);
	snprintf(parent, sizeof(parent), "%s", path);
	if (stat(dirname(parent), &st) != 0)
		return cannot(path, suite, errno);
	if (!S_ISDIR(st.st_mode))
		return cannot(path, suite, ENOTDIR);
	snprintf(parent, sizeof(parent), "%s", path);
	return access(dirname(parent), W_OK | X_OK) == 0 ? IBC_OK : cannot(path, suite, errno);
}

int ibc_harness_junit_write(const char *path, const char *suite, const struct ibc_junit_case *c, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t i, nfail = 0;
	struct stat st;
	int err = 0, regular;

	if (f == NULL)
		return cannot(path, suite, errno);
	regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
	errno = 0;
	for (i = 0; i < n; i++)
		nfail += !c[i].ok;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"", f);
	ibc_html_puts(f, suite);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\">\n", n, nfail);
	for (i = 0; i < n; i++) {
		fputs("  <testcase classname=\"", f);
		ibc_html_puts(f, suite);
		fputs("\" name=\"", f);
		ibc_html_puts(f, c[i].name);
		fputs(c[i].ok ? "\"><system-out>" : "\"><failure message=\"", f);
		ibc_html_puts(f, c[i].text);
		fputs(c[i].ok ? "</system-out></testcase>\n" : "\"/></testcase>\n", f);
	}
	fputs("</testsuite>\n", f);
	if (ferror(f))
		err = errno != 0 ? errno : EIO;
	if (fclose(f) != 0 && err == 0)
		err = errno;
	if (err == 0)
		return IBC_OK;
	if (regular)
		(void)unlink(path); /* half a file would pass for a report */
	return cannot(path, suite, err);
}
