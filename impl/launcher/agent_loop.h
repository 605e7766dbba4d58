/* Internal: the node agent's event-loop state (the collective, mailbox and
 * pending-get records hung off struct ibc_launch_agent) and the functions its
 * files share: agent_send.c (sending, routing, failure), agent_coll.c,
 * agent_kvs.c (bulletin board, caches), agent_p2p.c, agent_pmi.c (process
 * protocol), agent_io.c (output, stdin), agent_spawn.c, agent_loop.c (the
 * loop); and the interface to the launcher and NLA entry points (launcher.c).
 * Calls run one way: agent_loop.c calls the sections; agent_pmi.c calls
 * coll, kvs and p2p; every section calls agent_send.c, which calls none. */
#ifndef IBC_LAUNCH_AGENT_LOOP_H
#define IBC_LAUNCH_AGENT_LOOP_H

#include "launcher/agent.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum { IBC_LAUNCH_WAIT_NONE = 0, IBC_LAUNCH_WAIT_COLL, IBC_LAUNCH_WAIT_BARRIER, IBC_LAUNCH_WAIT_RECV, IBC_LAUNCH_WAIT_GET, IBC_LAUNCH_WAIT_PMIGET };

struct ibc_launch_msgq {
	struct ibc_launch_msgq *next;
	int src, tag;
	size_t len;
	unsigned char data[];
};

struct ibc_launch_coll {
	struct ibc_launch_coll *next;
	uint32_t seq;
	int op, root, have, sent;
	struct ibc_launch_buf ent;
	uint32_t nent;
	struct ibc_launch_buf kv;
	uint32_t nkv;
};

struct ibc_launch_getwait {
	struct ibc_launch_getwait *next;
	char *key;
	int proc;  /* local process index, or -1 */
	int child; /* child link index, or -1 */
};

double ibc_launch_now(void);
void ibc_launch_fd_nonblock(int fd);
void ibc_launch_fail(struct ibc_launch_agent *a, int rank, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ibc_launch_terminate(struct ibc_launch_agent *a);
int ibc_launch_status_code(int status);
/* Sets up children, local processes and signal handling, then runs the loop
 * until the job (or this agent's part of it) is over. */
int ibc_launch_agent_run(struct ibc_launch_agent *a);
void ibc_launch_agent_free(struct ibc_launch_agent *a);
/* One decoded frame (h, its payload pl) from link c (the parent or a child),
 * as the loop handles it; for tests/fuzz/wire_agent.c. */
void ibc_launch_agent_frame(struct ibc_launch_agent *a, struct ibc_launch_conn *c, const struct ibc_launch_hdr *h,
			    const unsigned char *pl);
/* Sets the rank's environment in the current (forked) process. */
void ibc_launch_proc_env(const struct ibc_launch_job *j, int rank, int fd);

/* agent_send.c */
void ibc_launch_link_send(struct ibc_launch_agent *a, struct ibc_launch_conn *c, int type, uint32_t src,
			  uint32_t dst, uint32_t seq, uint32_t aux, const void *p, size_t n);
void ibc_launch_parent_send(struct ibc_launch_agent *a, int type, uint32_t src, uint32_t dst, uint32_t seq,
			    uint32_t aux, const void *p, size_t n);
void ibc_launch_proc_replyf(struct ibc_launch_proc *p, const void *payload, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int ibc_launch_agent_node_of(const struct ibc_launch_agent *a, int r);
struct ibc_launch_proc *ibc_launch_proc_local(struct ibc_launch_agent *a, int r);
int ibc_launch_route(struct ibc_launch_agent *a, int r, int *child);
void ibc_launch_sig_name(int sig, char *buf, size_t n);
void ibc_launch_status_text(int status, char *buf, size_t n);
const char *ibc_launch_host_of(const struct ibc_launch_agent *a, int rank);
void ibc_launch_proc_proto_error(struct ibc_launch_agent *a, struct ibc_launch_proc *p, const char *resp,
				 const char *why);

/* agent_coll.c */
struct ibc_launch_coll *ibc_launch_agent_coll_find(struct ibc_launch_agent *a, uint32_t seq, int create);
void ibc_launch_agent_coll_free(struct ibc_launch_agent *a, struct ibc_launch_coll *c);
/* Root: who the oldest unfinished collective still waits for, as text
 * ("collective 7 has 56 of 64 ranks; none yet from ibc-h5 (8 ranks)"), or
 * "" when none waits. */
void ibc_launch_agent_coll_missing(struct ibc_launch_agent *a, char *out, size_t cap);
/* An agent whose job ends: logs each local rank that had not joined the
 * oldest unfinished collective that other ranks of this node had joined
 * (the rank that did not answer). */
void ibc_launch_agent_coll_stragglers(struct ibc_launch_agent *a);
void ibc_launch_proc_coll(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int op, int root,
			  const void *data, size_t len, int wait);
void ibc_launch_coll_down(struct ibc_launch_agent *a, struct ibc_launch_coll *c, const void *pl, size_t n);
void ibc_launch_coll_up(struct ibc_launch_agent *a, struct ibc_launch_conn *from, const struct ibc_launch_hdr *h,
			const unsigned char *pl);

/* agent_kvs.c */
void ibc_launch_bb_cache_pairs(struct ibc_launch_agent *a, const void *p, size_t len, uint32_t n);
void ibc_launch_bb_get(struct ibc_launch_agent *a, const char *key, int proc, int child);
void ibc_launch_bb_on_get_resp(struct ibc_launch_agent *a, const struct ibc_launch_hdr *h, const unsigned char *pl);
void ibc_launch_bb_put(struct ibc_launch_agent *a, const char *key, const void *v, size_t len);
void ibc_launch_bb_on_put(struct ibc_launch_agent *a, const struct ibc_launch_hdr *h, const unsigned char *pl);

/* agent_p2p.c */
void ibc_launch_p2p_try_recv(struct ibc_launch_proc *p);
void ibc_launch_p2p_deliver(struct ibc_launch_agent *a, int src, int dst, int tag, const void *d, size_t len);

/* agent_pmi.c */
void ibc_launch_proc_input(struct ibc_launch_agent *a, struct ibc_launch_proc *p);

/* agent_io.c */
void ibc_launch_output_emit(struct ibc_launch_agent *a, int rank, int stream, const void *d, size_t n);
void ibc_launch_output_lines(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int s, int eof);
void ibc_launch_output_read(struct ibc_launch_agent *a, struct ibc_launch_proc *p, int s);
int ibc_launch_stdin_ready(struct ibc_launch_agent *a);
void ibc_launch_stdin_read(struct ibc_launch_agent *a);

/* agent_spawn.c */
int ibc_launch_spawn_local(struct ibc_launch_agent *a, struct ibc_launch_proc *p);
int ibc_launch_spawn_rsh(struct ibc_launch_agent *a, const char *host, char **cmd, int *io, pid_t *pid_out);

#endif
