/* launcher bootstrap: the ibchar primitives of ibchar-launch's node agent
 * over the socket in PMI_FD (impl/launcher/client.h, WIRE.md). */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "launcher/client.h"
#include "launcher/proto.h"

#include <stdlib.h>
#include <string.h>

static struct ibc_launch_client *cli(struct ibc_boot *b)
{
	return b->priv;
}

static int l_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{
	size_t got = 0;
	int rc = ibc_launch_client_coll(cli(b), IBC_LAUNCH_COLL_ALLGATHER, 0, send, len, recv,
					len * (size_t)b->size, &got);

	if (rc == IBC_OK && got != len * (size_t)b->size) {
		ibc_error("boot launcher: allgather returned %zu bytes, expected %zu", got, len * (size_t)b->size);
		return IBC_ERR_PROTO;
	}
	return rc;
}

static int l_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	size_t got = 0;
	int rc = ibc_launch_client_coll(cli(b), IBC_LAUNCH_COLL_GATHER, root, send, len,
					b->rank == root ? recv : NULL, b->rank == root ? len * (size_t)b->size : 0, &got);

	if (rc == IBC_OK && b->rank == root && got != len * (size_t)b->size) {
		ibc_error("boot launcher: gather returned %zu bytes", got);
		return IBC_ERR_PROTO;
	}
	return rc;
}

static int l_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{
	size_t got = 0;
	int rc = ibc_launch_client_coll(cli(b), IBC_LAUNCH_COLL_BCAST, root, buf, b->rank == root ? len : 0,
					buf, len, &got);

	if (rc == IBC_OK && got != len) {
		ibc_error("boot launcher: bcast of %zu bytes returned %zu", len, got);
		return IBC_ERR_PROTO;
	}
	return rc;
}

static int l_barrier(struct ibc_boot *b)
{
	return ibc_launch_client_coll(cli(b), IBC_LAUNCH_COLL_BARRIER, 0, NULL, 0, NULL, 0, NULL);
}

static int l_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{
	return ibc_launch_client_put(cli(b), key, val, len);
}

static int l_fence(struct ibc_boot *b)
{
	return ibc_launch_client_fence(cli(b));
}

static int l_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{
	size_t dummy;

	return ibc_launch_client_get(cli(b), key, val, cap, len ? len : &dummy);
}

static void l_abort(struct ibc_boot *b, int code, const char *why)
{
	ibc_launch_client_abort(cli(b), code, why);
}

static int l_close(struct ibc_boot *b)
{
	int rc = ibc_launch_client_close(cli(b));

	free(b->priv);
	free(b);
	return rc;
}

const struct ibc_boot_ops ibc_boot_launcher_ops = {
	.name = "launcher",
	.allgather = l_allgather,
	.gather = l_gather,
	.bcast = l_bcast,
	.barrier = l_barrier,
	.put = l_put,
	.fence = l_fence,
	.get = l_get,
	.abort = l_abort,
	.close = l_close,
};

int ibc_boot_launcher_open(struct ibc_boot **out)
{
	struct ibc_boot *b;
	struct ibc_launch_client *c;
	int rc;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	c = calloc(1, sizeof(*c));
	if (b == NULL || c == NULL) {
		free(b);
		free(c);
		return IBC_ERR_NOMEM;
	}
	rc = ibc_launch_client_open(c);
	if (rc != IBC_OK) {
		if (rc == IBC_ERR_NOTFOUND)
			ibc_debug("boot launcher: PMI_FD not set: not started by ibchar-launch");
		free(b);
		free(c);
		return rc;
	}
	b->ops = &ibc_boot_launcher_ops;
	b->rank = c->rank;
	b->size = c->size;
	b->local_rank = c->local_rank;
	b->local_size = c->local_size;
	b->node_id = c->node;
	b->num_nodes = c->nnodes;
	b->priv = c;
	*out = b;
	return IBC_OK;
}
