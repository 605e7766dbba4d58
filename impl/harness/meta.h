/* Provenance for meta.csv (harness-internal). */
#ifndef IBC_HARNESS_META_H
#define IBC_HARNESS_META_H

#include "harness/harness.h"

struct ibc_harness_meta_in {
	const struct ibc_harness_params *p;
	struct ibc_boot *boot;
	const char *run_id, *launcher, *wait, *sync;
	const char *sync_why;          /* why this sync (e.g. the clock check failed) */
	const struct ibc_gclock *clock; /* NULL: no global clock was built */
	int oversub, pinned, pin_asked;
	double probe_us;
};

/* Writes (or extends) <out>/meta.csv as key,value rows: a row "bench,K"
 * (the K-th bench launch into the directory), then every key whose value
 * differs from the one the file holds last for it.  A reader replays the
 * file: a bench had the values written in its part, and for every other key
 * the value last written before it (every bench writes every key, empty
 * where it has none).  The appends add keys to the current bench. */
int ibc_harness_meta_write(const struct ibc_harness_meta_in *in);
int ibc_harness_meta_append_double(const char *path, const char *key, double v);
int ibc_harness_meta_append(const char *path, const char *key, const char *v);
/* The first line of a shell command's output in buf (newline removed; ""
 * when none); returns its exit status, -1 when it could not run. */
int ibc_harness_cmd_line(const char *cmd, char *buf, size_t cap);
/* rdma-core's version and where it came from (dpkg-query, else pkg-config). */
void ibc_harness_rdma_core_version(char *buf, size_t cap, const char **source);

#endif
