/* JUnit XML: see junit.h. */
#include "harness/junit.h"
#include "harness/table.h"
#include "core/status.h"

#include <stdio.h>

int ibc_harness_junit_write(const char *path, const char *suite, const struct ibc_junit_case *c, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t i, nfail = 0;

	if (f == NULL) {
		fprintf(stderr, "ibchar: cannot write %s\n", path);
		return IBC_ERR_IO;
	}
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
	return fclose(f) == 0 ? IBC_OK : IBC_ERR_IO;
}
