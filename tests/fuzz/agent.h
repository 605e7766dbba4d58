/* A node agent for the harnesses, without sockets or processes: the root
 * of a flat job of NP ranks on one node (so collectives complete here), its
 * job description made by encoding and decoding one (job.c), its processes
 * "connected" to /dev/null (replies are queued, never written). */
#ifndef IBC_FUZZ_AGENT_H
#define IBC_FUZZ_AGENT_H

#include "launcher/agent_loop.h"
#include "launcher/cache.h"
#include "launcher/job.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_NP 3

/* a zeroed agent number me of job j (copied through the JOB encoding), no
 * link open, its cache bounded to bound bytes (0: none) */
static inline void fuzz_agent_base(struct ibc_launch_agent *a, const struct ibc_launch_job *j, int me,
				   uint64_t bound)
{
	struct ibc_launch_buf b = { 0 };

	memset(a, 0, sizeof(*a));
	ibc_launch_job_encode(j, &b);
	if (ibc_launch_job_decode(ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b), &a->job) != 0)
		abort();
	ibc_launch_buf_free(&b);
	a->me = me;
	a->k = (int)j->degree;
	a->ntree = (int)j->nnodes + 1;
	a->parent.fd = a->listen_fd = a->sigfd = a->stdin_fd = -1;
	if (ibc_launch_cache_init(&a->cache, bound) != 0)
		abort();
}

static inline void fuzz_agent_init(struct ibc_launch_agent *a, int cache)
{
	char *hosts[] = { "h0" }, *argv[] = { "prog" };
	int start[] = { 0, FUZZ_NP }, i;
	struct ibc_launch_job j = { .jobid = 1, .token = 2, .np = FUZZ_NP, .nnodes = 1, .degree = 2,
				    .mode = IBC_LAUNCH_MODE_FLAT, .cache = (uint32_t)cache, .self = "/x",
				    .rsh = "local", .cwd = "/", .hosts = hosts, .start = start, .argc = 1,
				    .argv = argv };

	fuzz_agent_base(a, &j, 0, 0);
	a->flat = 1;
	a->nproc = FUZZ_NP;
	a->proc = calloc(FUZZ_NP + 1, sizeof(*a->proc));
	a->child = calloc(1, sizeof(*a->child));
	if (a->proc == NULL || a->child == NULL)
		abort();
	for (i = 0; i < FUZZ_NP; i++) {
		struct ibc_launch_proc *p = &a->proc[i];

		p->rank = p->lrank = i;
		p->sock = open("/dev/null", O_WRONLY | O_CLOEXEC);
		p->infd = -1;
		p->ofd[0] = p->ofd[1] = -1;
	}
}

/* Node agent 1 of a tree job of 3 nodes, 1 rank each, degree 2: its parent
 * is the launcher, its child the agent of node 2 (index 3); both links
 * closed (fd -1), so what it sends is dropped. */
static inline void fuzz_agent_nla_init(struct ibc_launch_agent *a, int cache)
{
	char *hosts[] = { "h0", "h1", "h2" }, *argv[] = { "prog" };
	int start[] = { 0, 1, 2, 3 };
	struct ibc_launch_job j = { .jobid = 1, .token = 2, .np = 3, .nnodes = 3, .degree = 2,
				    .mode = IBC_LAUNCH_MODE_TREE, .cache = (uint32_t)cache, .cache_bound = 4096,
				    .self = "/x", .rsh = "local", .cwd = "/", .hosts = hosts, .start = start,
				    .argc = 1, .argv = argv };

	fuzz_agent_base(a, &j, 1, cache == IBC_LAUNCH_CACHE_HCMAB_LRU ? 4096 : 0);
	a->nchild = 1;
	a->first_child = 3;
	a->first_rank = 0;
	a->nproc = 1;
	a->subtree_ranks = 2;
	a->proc = calloc(2, sizeof(*a->proc));
	a->child = calloc(2, sizeof(*a->child));
	if (a->proc == NULL || a->child == NULL)
		abort();
	a->child[0].fd = -1;
	a->child[0].idx = 3;
	a->child[0].hello = 1;
	a->proc[0].sock = open("/dev/null", O_WRONLY | O_CLOEXEC);
	a->proc[0].infd = -1;
	a->proc[0].ofd[0] = a->proc[0].ofd[1] = -1;
}

#endif
