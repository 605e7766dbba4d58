/* Shared by the libFuzzer harnesses of tests/fuzz/ (built by `make fuzz-build`
 * with clang -fsanitize=fuzzer,address,undefined; see scripts/fuzz.sh).
 * Each harness defines LLVMFuzzerTestOneInput; these helpers silence the
 * library's log and hand inputs to readers that take a file. */
#ifndef IBC_FUZZ_H
#define IBC_FUZZ_H

#include "core/log.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Once per process: no log lines (they would drown the fuzzer's). */
static inline void fuzz_quiet(void)
{
	static int done;

	if (!done) {
		ibc_log_level_set(IBC_LOG_NONE);
		done = 1;
	}
}

/* A directory of this process for the files of one input. */
static inline const char *fuzz_dir(void)
{
	static char dir[64];

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/ibc-fuzz.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
	}
	return dir;
}

/* data into fuzz_dir()/name; the path in path (cap bytes). */
static inline void fuzz_file(const char *name, const uint8_t *data, size_t size, char *path, size_t cap)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", fuzz_dir(), name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
}

/* data as a NUL-terminated string (the caller frees it). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
