/* Shared by the libFuzzer harnesses of tests/fuzz/ (built by `make fuzz-build`
 * with clang -fsanitize=fuzzer,address,undefined; see scripts/fuzz.sh).
 * Each harness defines LLVMFuzzerTestOneInput; these helpers silence the
 * library's log and hand inputs to readers that take a file. */
#ifndef IBC_FUZZ_H
#define IBC_FUZZ_H

#include "core/log.h"

#include <dirent.h>
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

static char fuzz_dir_path[64];

/* at exit: the directory and the files in it (there are no subdirectories) */
static void fuzz_dir_remove(void)
{
	DIR *d = opendir(fuzz_dir_path);
	struct dirent *e;
	char path[400];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir_path, e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(fuzz_dir_path);
}

/* A directory of this process for the files of one input, removed at exit. */
static inline const char *fuzz_dir(void)
{
	if (fuzz_dir_path[0] == '\0') {
		snprintf(fuzz_dir_path, sizeof(fuzz_dir_path), "/tmp/ibc-fuzz.XXXXXX");
		if (mkdtemp(fuzz_dir_path) == NULL)
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir_path;
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
