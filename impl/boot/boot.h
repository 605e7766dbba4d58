/* Bootstrap: the out-of-band service every ibchar program starts from
 * (like UCX perftest's "rte").  Backends:
 *   single    one process, no peers;
 *   fork      this process forks N - 1 others on this host (tests, --launcher local);
 *   mpi       MPI_COMM_WORLD (boot_mpi.c, linked only into the *-<mpi> binaries);
 *   launcher  ibchar-launch's node agent over PMI_FD (the launcher issue);
 *   pmi2      a PMI-2 process manager over PMI_FD (srun --mpi=pmi2).
 * Endpoint exchange for transports (QPN/LID/GID/PSN, shm segment names) goes
 * through allgather or put/fence/get here, written once. */
#ifndef IBC_BOOT_H
#define IBC_BOOT_H

#include "core/progress.h"

#include <stddef.h>

struct ibc_boot;

struct ibc_boot_ops {
	const char *name;
	/* recv holds size * len bytes, rank r's block at r * len */
	int (*allgather)(struct ibc_boot *b, const void *send, void *recv, size_t len);
	/* recv (only at root) holds size * len bytes */
	int (*gather)(struct ibc_boot *b, const void *send, void *recv, size_t len, int root);
	int (*bcast)(struct ibc_boot *b, void *buf, size_t len, int root);
	int (*barrier)(struct ibc_boot *b);
	/* bulletin board: put is visible to every rank after the next fence */
	int (*put)(struct ibc_boot *b, const char *key, const void *val, size_t len);
	int (*fence)(struct ibc_boot *b);
	int (*get)(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len);
	/* ends the job on every rank as fast as possible (best effort) */
	void (*abort)(struct ibc_boot *b, int code, const char *why);
	/* collective; returns the job's status (fork: rank 0 reaps the others) */
	int (*close)(struct ibc_boot *b);
};

struct ibc_boot {
	const struct ibc_boot_ops *ops;
	int rank, size;
	int local_rank, local_size; /* among the ranks on this node */
	int node_id, num_nodes;
	void *priv;
};

/* Opens the bootstrap the environment asks for: "launcher" when started by
 * ibchar-launch (PMI_FD set), "tcp" when IBC_BOOT=tcp, else "fork" with
 * nprocs ranks (nprocs <= 1: "single"); PMI_FD without ibchar-launch's
 * IBC_LAUNCH_RANK is "pmi2".  name may force one of "single", "fork", "tcp",
 * "launcher", "pmi2"; "auto" or NULL = environment. */
int ibc_boot_open(const char *name, int nprocs, struct ibc_boot **out);
/* fork backend: the calling process becomes rank 0 and forks nprocs - 1
 * children; every process returns from here with its own handle. */
int ibc_boot_fork_open(int nprocs, struct ibc_boot **out);
int ibc_boot_single_open(struct ibc_boot **out);
/* launcher backend (boot_launcher.c, the launcher issue): talks to the local
 * node agent of ibchar-launch; IBC_ERR_NOTFOUND when not started by it. */
int ibc_boot_launcher_open(struct ibc_boot **out);
/* pmi2 backend (boot_pmi2.c): the PMI-2 wire protocol on PMI_FD, e.g. under
 * srun --mpi=pmi2; IBC_ERR_NOTFOUND without PMI_FD, IBC_ERR_PROTO when the
 * other end does not speak PMI-2.  Node ids and local ranks come from the
 * job's PMI_process_mapping. */
int ibc_boot_pmi2_open(struct ibc_boot **out);
/* PMI_process_mapping "(vector,(start,nodes,per_node),...)" -> the node of
 * each of size ranks (node_of[size]); IBC_ERR_PROTO when it is not one. */
int ibc_boot_pmi2_mapping(const char *map, int size, int *node_of);
/* tcp backend (boot_tcp.c): ranks on several hosts without a launcher, e.g.
 * two Soft-RoCE guests.  Environment: IBC_BOOT=tcp, IBC_BOOT_RANK,
 * IBC_BOOT_SIZE, IBC_BOOT_ROOT=host:port (rank 0 listens there). */
int ibc_boot_tcp_open(struct ibc_boot **out);
/* Collective: every rank's status mine -> *agreed, the same on every rank:
 * IBC_OK when all are, else a failure (errors win over IBC_ERR_UNSUPPORTED).
 * Returns the allgather's status (IBC_ERR_NOMEM before it, best effort). */
int ibc_boot_agree(struct ibc_boot *b, int mine, int *agreed);
/* One shared mapping for ranks of one node (boot_shm.c), collective over all
 * ranks of b: rank owner creates a zero-filled POSIX shm segment of len bytes
 * named after tag, the name goes out by bcast, every rank with map != 0 maps
 * it (those ranks must be on the owner's node: the caller checks), all agree,
 * and the owner unlinks the name at once, so nothing is left in /dev/shm even
 * if a rank dies later.  *out = the mapping (NULL where map == 0); release it
 * with munmap(*out, len).  The status is the same on every rank. */
/* The names ibc_boot_shm_map left in /dev/shm because their owner died
 * between making and unlinking one (a job ended by a timeout while a rank
 * waited for a peer): unlinked when their owner's pid is gone.  How many. */
int ibc_boot_shm_sweep(void);
int ibc_boot_shm_map(struct ibc_boot *b, int owner, const char *tag, size_t len, int map,
		     void **out);

#ifdef IBC_HAVE_MPI
/* mpi backend (boot_mpi.c): calls MPI_Init unless MPI is initialised. */
int ibc_boot_mpi_open(int *argc, char ***argv, struct ibc_boot **out);
#endif

/* The collectives: each marks this rank in and out of it in the runner's
 * progress record (core/progress.h). */
static inline int ibc_boot_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{ ibc_progress_in(b->rank, "allgather"); return ibc_progress_out(b->ops->allgather(b, send, recv, len)); }
static inline int ibc_boot_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{ ibc_progress_in(b->rank, "gather"); return ibc_progress_out(b->ops->gather(b, send, recv, len, root)); }
static inline int ibc_boot_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{ ibc_progress_in(b->rank, "bcast"); return ibc_progress_out(b->ops->bcast(b, buf, len, root)); }
static inline int ibc_boot_barrier(struct ibc_boot *b)
{ ibc_progress_in(b->rank, "barrier"); return ibc_progress_out(b->ops->barrier(b)); }
static inline int ibc_boot_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{ return b->ops->put(b, key, val, len); }
static inline int ibc_boot_fence(struct ibc_boot *b)
{ ibc_progress_in(b->rank, "fence"); return ibc_progress_out(b->ops->fence(b)); }
static inline int ibc_boot_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{ return b->ops->get(b, key, val, cap, len); }
static inline void ibc_boot_abort(struct ibc_boot *b, int code, const char *why)
{ b->ops->abort(b, code, why); }
static inline int ibc_boot_close(struct ibc_boot *b) { return b->ops->close(b); }

#endif
