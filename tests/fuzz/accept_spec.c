/* The spec parser of ibchar accept (tools/accept_spec.c): the input is a
 * spec file ("run ARGS" and "check SUITE ... : METRIC OP BOUND" lines). */
#include "fuzz.h"
#include "tools/accept.h"
#include "tools/accept_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibc_accept_opts o = { 0 };
	struct acc a;
	char path[128];
	FILE *saved = stderr;

	fuzz_quiet();
	fuzz_file("spec", data, size, path, sizeof(path));
	memset(&a, 0, sizeof(a));
	o.spec = path;
	a.o = &o;
	stderr = fopen("/dev/null", "w"); /* the parser says what is wrong on stderr */
	if (stderr == NULL)
		stderr = saved;
	(void)ibc_accept_spec_read(&a);
	if (stderr != saved)
		fclose(stderr);
	stderr = saved;
	free(a.cs);
	free(a.rl);
	return 0;
}
