/* Process side of ibchar-launch: talks to the local node launch agent over
 * the socket in PMI_FD (the launcher's primitives; see WIRE.md).  Blocking
 * calls; one client per process. */
#ifndef IBC_LAUNCH_CLIENT_H
#define IBC_LAUNCH_CLIENT_H

#include <stddef.h>

struct ibc_launch_client {
	int fd;
	int rank, size, local_rank, local_size, node, nnodes;
};

/* Reads PMI_FD, PMI_RANK, PMI_SIZE, IBC_LAUNCH_* and sends cmd=init.
 * IBC_ERR_NOTFOUND when PMI_FD is not set. */
int ibc_launch_client_open(struct ibc_launch_client *c);
/* cmd=finalize; closes the fd. */
int ibc_launch_client_close(struct ibc_launch_client *c);
/* Collective op (proto.h) on sbuf (slen bytes; for scatter/alltoall slen is
 * size * block at the root / every rank).  The result (rcap bytes room) and
 * its size in *rlen. */
int ibc_launch_client_coll(struct ibc_launch_client *c, int op, int root, const void *sbuf,
			   size_t slen, void *rbuf, size_t rcap, size_t *rlen);
int ibc_launch_client_send(struct ibc_launch_client *c, int dest, int tag, const void *buf, size_t len);
/* src = -1 for any; *src_out and *tag_out may be NULL. */
int ibc_launch_client_recv(struct ibc_launch_client *c, int src, int tag, void *buf, size_t cap,
			   size_t *len, int *src_out);
int ibc_launch_client_put(struct ibc_launch_client *c, const char *key, const void *val, size_t len);
/* IBC_ERR_NOTFOUND when no rank put key (before the last fence);
 * IBC_ERR_NOMEM (*len = its size) when the value is larger than cap: it is
 * read and dropped, the connection stays usable. */
int ibc_launch_client_get(struct ibc_launch_client *c, const char *key, void *val, size_t cap, size_t *len);
int ibc_launch_client_fence(struct ibc_launch_client *c);
/* Asks the launcher to end the job with exit status code. */
int ibc_launch_client_abort(struct ibc_launch_client *c, int code, const char *why);

#endif
