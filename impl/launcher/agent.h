/* Internal: the node agent shared by the launcher (tree index 0, the root)
 * and the node launch agents (index node + 1).  In flat mode the launcher is
 * the only agent and every process is its local client. */
#ifndef IBC_LAUNCH_AGENT_H
#define IBC_LAUNCH_AGENT_H

#include <stdint.h>
#include <sys/types.h>

#include "launcher/cache.h"
#include "launcher/job.h"
#include "launcher/wire.h"

struct ibc_launch_msgq;
struct ibc_launch_coll;
struct ibc_launch_getwait;

enum { IBC_LAUNCH_CONN_PENDING = 0, IBC_LAUNCH_CONN_PARENT, IBC_LAUNCH_CONN_CHILD };

struct ibc_launch_conn {
	int fd;
	int idx;     /* tree index of the peer */
	int node;    /* its node (idx - 1) */
	struct ibc_launch_buf in, out;
	pid_t pid;   /* remote shell that started the peer (children), 0 none */
	int hello, done, reaped, status, lost;
	double spawned_at; /* children: when started; accepted (pending) ones: when accepted */
};

struct ibc_launch_proc {
	int rank, lrank;
	pid_t pid;
	int sock;                 /* PMI_FD peer, -1 until connected (flat) */
	struct ibc_launch_buf in, out;
	int ofd[2];               /* stdout, stderr read ends (-1 closed) */
	struct ibc_launch_buf line[2];
	int infd;                 /* stdin write end, -1 closed */
	struct ibc_launch_buf inq;
	int stdin_eof;
	int reaped, status, finished;
	int inited, finalized;
	uint32_t coll_seq;
	int wait;                 /* what the process blocks on (IBC_LAUNCH_WAIT_*) */
	uint32_t wait_seq;
	int recv_src, recv_tag;
	struct ibc_launch_msgq *mbox, *mbox_tail;
	double reaped_at;
};

struct ibc_launch_ctr {
	uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
	uint64_t puts, gets, hits, misses;
};

struct ibc_launch_agent {
	struct ibc_launch_job job;
	int me, k, ntree;             /* tree index, degree, entries (nnodes + 1) */
	int flat;
	struct ibc_launch_conn parent; /* fd -1 at the root */
	struct ibc_launch_conn *child;
	int nchild, first_child;
	struct ibc_launch_conn *pend;  /* accepted, no HELLO yet */
	int npend;
	struct ibc_launch_proc *proc;
	int nproc, first_rank, subtree_ranks;
	int listen_fd, port;
	char addr[64];                 /* address children connect to */
	int sigfd;
	struct ibc_launch_coll *colls;
	struct ibc_launch_cache cache;
	struct ibc_launch_buf kvpend;  /* HCMA*: puts waiting for the next fence */
	uint32_t nkvpend;
	struct ibc_launch_getwait *gets;
	struct ibc_launch_ctr ctr;
	int terminating, parent_lost, done_sent, killed;
	int stragglers_said;           /* the ranks an unfinished collective waited for: logged */
	double kill_at;
	/* root only */
	int failed, fail_code;
	char fail_msg[600];
	double deadline, final_deadline, timeout;
	int stdin_fd;
	struct ibc_launch_buf stats; /* DONE records received */
	uint32_t nstats;
	char **child_addr;           /* per child: address it connects back to */
};

#endif
