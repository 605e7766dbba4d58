/* perftest (linux-rdma/perftest) as a reference: runs ib_write_lat /
 * ib_write_bw between two ranks of one node and parses the client's output.
 *
 *   struct ibc_link_perftest_args a = { .tool = IBC_LINK_PERFTEST_WRITE_LAT,
 *       .device = x->caps.device, .gid_index = x->params.gid_index,
 *       .bytes = 4096, .iters = 1000, .window = 64, .tcp_port = port };
 *   struct ibc_link_perftest_result r = { 0 };
 *   rc = ibc_link_perftest_run(boot, &a, &r);   (collective over ranks 0 and 1)
 *   ... r.us[0 .. r.n) (write-lat, one-way us) or r.mbps (write-bw), on rank 0
 *   ibc_link_perftest_result_free(&r);
 *
 * Rank 1 starts the server and waits until it listens on tcp_port; rank 0 runs
 * the client against 127.0.0.1 into a temporary file and parses it.  A tool
 * that is missing or fails is IBC_ERR_UNSUPPORTED (logged at info). */
#ifndef IBC_LINK_PERFTEST_H
#define IBC_LINK_PERFTEST_H

#include <stddef.h>
#include <stdio.h>

struct ibc_boot;

enum ibc_link_perftest_tool {
	IBC_LINK_PERFTEST_WRITE_LAT = 0, /* ib_write_lat -U: every one-way sample */
	IBC_LINK_PERFTEST_WRITE_BW = 1   /* ib_write_bw -t window: average MB/s */
};

struct ibc_link_perftest_args {
	enum ibc_link_perftest_tool tool;
	const char *device;  /* "dev" or "dev:port" (the transport's caps.device) */
	int gid_index;       /* < 0: perftest's default (no -x) */
	size_t bytes;        /* -s */
	long iters;          /* -n (at least 5) */
	long window;         /* -t, write-bw */
	int tcp_port;        /* -p: the same on both ranks */
};

struct ibc_link_perftest_result {
	double *us;          /* write-lat samples (us), n of them */
	long n, cap;
	double mbps;         /* write-bw average */
	char last_line[256]; /* the client's last non-empty line (for logs) */
	int clock_bad;       /* perftest's cycle-counter calibration failed (a busy
				host): its numbers are meaningless */
};

/* Collective over boot (ranks above 1 only take part in its barriers).
 * Appends to res on rank 0; IBC_ERR_NOTFOUND when the tool cannot be
 * started (not installed), IBC_ERR_UNSUPPORTED when its client failed. */
int ibc_link_perftest_run(struct ibc_boot *boot, const struct ibc_link_perftest_args *a,
			  struct ibc_link_perftest_result *res);
/* Parses a client's output: "#, usec" then "i, value" lines (lat -U), or for
 * bw the line after the "#bytes" header whose size is bytes (bytes iters peak
 * avg rate), and perftest's "Correlation coefficient" complaint about its
 * clock calibration (-> clock_bad).  Appends to res; IBC_ERR_NOMEM only. */
int ibc_link_perftest_parse(FILE *f, enum ibc_link_perftest_tool tool, size_t bytes,
			    struct ibc_link_perftest_result *res);
/* Forgets the results (keeps the sample storage). */
void ibc_link_perftest_result_reset(struct ibc_link_perftest_result *res);
void ibc_link_perftest_result_free(struct ibc_link_perftest_result *res);

#endif
