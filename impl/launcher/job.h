/* The job description the launcher sends down the tree (JOB frame) and the
 * launcher's public entry points. */
#ifndef IBC_LAUNCH_JOB_H
#define IBC_LAUNCH_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "launcher/wire.h"

enum ibc_launch_mode { IBC_LAUNCH_MODE_TREE = 0, IBC_LAUNCH_MODE_FLAT = 1 };

struct ibc_launch_job {
	uint32_t jobid;
	uint32_t token;       /* random; children echo it in HELLO (seq) */
	uint32_t np, nnodes, degree, mode, cache, tag_output, log_level;
	uint64_t cache_bound; /* HCMAB-LRU bytes per NLA */
	char *self;           /* absolute path of ibchar-launch */
	char *rsh;            /* "local", "ssh" or a template with {host} */
	char *cwd;
	char **hosts;         /* nnodes names */
	int *start;           /* nnodes + 1: first rank of each node, start[nnodes] = np */
	int argc;
	char **argv;          /* program and arguments */
	int nenv;
	char **env;           /* "VAR=VALUE" exported to every process */
};

void ibc_launch_job_encode(const struct ibc_launch_job *j, struct ibc_launch_buf *out);
/* IBC_ERR_PROTO for a malformed or inconsistent description. */
int ibc_launch_job_decode(const void *p, size_t len, struct ibc_launch_job *out);
void ibc_launch_job_free(struct ibc_launch_job *j);

/* The ibchar-launch command line, filled by runner/ibchar-launch.c. */
struct ibc_launch_opts {
	long np, ppn, degree, max_conn, max_depth;
	double timeout;
	const char *hosts, *hostfile, *rsh, *addr, *stats_csv;
	int mode, cache, tag_output, stats;
	size_t cache_bytes;
	int nenv;
	const char *const *env; /* -x items: VAR or VAR=VAL */
	int argc;
	char **argv;
};

/* Runs a job; *exit_code is the launcher's exit status. */
int ibc_launch_run(const struct ibc_launch_opts *o, int *exit_code);
/* Node launch agent mode ("--agent ADDR:PORT:INDEX"). */
int ibc_launch_agent_main(const char *spec, int *exit_code);
/* Flat-mode proxy ("--proxy ADDR:PORT:RANK"): connects to the launcher and
 * becomes the program with PMI_FD on that connection. */
int ibc_launch_proxy_main(const char *spec, int *exit_code);

#endif
