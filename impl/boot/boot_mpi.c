/* mpi bootstrap: MPI_COMM_WORLD.  Built only into the *-<mpi> binaries
 * (-DIBC_HAVE_MPI).  local rank/size from MPI_Comm_split_type(SHARED); the
 * node id is the index of the node's lowest world rank among the node
 * leaders.  put/fence/get: puts are kept locally and allgathered at fence. */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kv {
	struct kv *next;
	char *key;
	size_t len;
	unsigned char val[];
};

struct mpi_boot {
	struct ibc_boot boot;
	MPI_Comm node_comm;
	int we_initialised;
	struct kv *pending; /* puts since the last fence */
	struct kv *table;   /* everything fenced */
};

static int mpi_fail(const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "MPI error %d", err);
	ibc_error("boot mpi: %s: %s", what, msg);
	return IBC_ERR_REMOTE;
}

/* MPI counts are int: large messages go in chunks of INT_MAX-ish bytes */
#define MPI_CHUNK ((size_t)1 << 30)

static int mpi_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{
	int err;

	(void)b;
	if (len > MPI_CHUNK) {
		ibc_error("boot mpi: allgather of %zu bytes per rank exceeds %zu", len, MPI_CHUNK);
		return IBC_ERR_INVAL;
	}
	err = MPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, MPI_COMM_WORLD);
	return err == MPI_SUCCESS ? IBC_OK : mpi_fail("MPI_Allgather", err);
}

static int mpi_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	int err;

	if (root < 0 || root >= b->size) {
		ibc_error("boot mpi: gather root %d out of range (size %d)", root, b->size);
		return IBC_ERR_INVAL;
	}
	if (len > MPI_CHUNK) {
		ibc_error("boot mpi: gather of %zu bytes per rank exceeds %zu", len, MPI_CHUNK);
		return IBC_ERR_INVAL;
	}
	err = MPI_Gather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
	return err == MPI_SUCCESS ? IBC_OK : mpi_fail("MPI_Gather", err);
}

static int mpi_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{
	unsigned char *p = buf;
	size_t off, chunk;
	int err;

	if (root < 0 || root >= b->size) {
		ibc_error("boot mpi: bcast root %d out of range (size %d)", root, b->size);
		return IBC_ERR_INVAL;
	}
	for (off = 0; off < len; off += chunk) {
		chunk = len - off < MPI_CHUNK ? len - off : MPI_CHUNK;
		err = MPI_Bcast(p + off, (int)chunk, MPI_BYTE, root, MPI_COMM_WORLD);
		if (err != MPI_SUCCESS)
			return mpi_fail("MPI_Bcast", err);
	}
	return IBC_OK;
}

static int mpi_barrier(struct ibc_boot *b)
{
	int err;

	(void)b;
	err = MPI_Barrier(MPI_COMM_WORLD);
	return err == MPI_SUCCESS ? IBC_OK : mpi_fail("MPI_Barrier", err);
}

static void kv_free_list(struct kv *e)
{
	struct kv *next;

	for (; e != NULL; e = next) {
		next = e->next;
		free(e->key);
		free(e);
	}
}

static struct kv *kv_new(const char *key, const void *val, size_t len)
{
	struct kv *e = malloc(sizeof(*e) + len);

	if (e == NULL)
		return NULL;
	e->key = strdup(key);
	if (e->key == NULL) {
		free(e);
		return NULL;
	}
	e->len = len;
	if (len > 0)
		memcpy(e->val, val, len);
	e->next = NULL;
	return e;
}

/* inserts e into the table, replacing an entry with the same key */
static void kv_insert(struct kv **list, struct kv *e)
{
	struct kv **pp;

	for (pp = list; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->key, e->key) == 0) {
			struct kv *old = *pp;

			e->next = old->next;
			*pp = e;
			free(old->key);
			free(old);
			return;
		}
	}
	e->next = *list;
	*list = e;
}

static int mpi_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{
	struct mpi_boot *m = b->priv;
	struct kv *e;

	if (len > UINT32_MAX || strlen(key) > UINT32_MAX) {
		ibc_error("boot mpi: put '%.40s': value too large", key);
		return IBC_ERR_INVAL;
	}
	e = kv_new(key, val, len);
	if (e == NULL)
		return IBC_ERR_NOMEM;
	e->next = m->pending;
	m->pending = e;
	return IBC_OK;
}

/* pending puts serialised as (u32 keylen, key, u32 vallen, val)* */
static int mpi_fence(struct ibc_boot *b)
{
	struct mpi_boot *m = b->priv;
	struct kv *e;
	size_t total = 0, off;
	unsigned char *mine = NULL, *all = NULL;
	int *counts = NULL, *displs = NULL, my_count, r, err, rc = IBC_ERR_NOMEM;
	long long sum = 0;
	uint32_t kl, vl;

	for (e = m->pending; e != NULL; e = e->next)
		total += 8 + strlen(e->key) + e->len;
	if (total > (size_t)INT32_MAX) {
		ibc_error("boot mpi: %zu bytes of puts in one fence", total);
		return IBC_ERR_INVAL;
	}
	mine = malloc(total + 1);
	counts = malloc(sizeof(int) * (size_t)b->size);
	displs = malloc(sizeof(int) * (size_t)b->size);
	if (mine == NULL || counts == NULL || displs == NULL)
		goto err_free;
	off = 0;
	for (e = m->pending; e != NULL; e = e->next) {
		kl = (uint32_t)strlen(e->key);
		vl = (uint32_t)e->len;
		memcpy(mine + off, &kl, 4);
		memcpy(mine + off + 4, e->key, kl);
		memcpy(mine + off + 4 + kl, &vl, 4);
		memcpy(mine + off + 8 + kl, e->val, vl);
		off += 8 + kl + vl;
	}
	my_count = (int)total;
	err = MPI_Allgather(&my_count, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS) {
		rc = mpi_fail("MPI_Allgather (fence sizes)", err);
		goto err_free;
	}
	for (r = 0; r < b->size; r++) {
		displs[r] = (int)sum;
		sum += counts[r];
	}
	if (sum > INT32_MAX) {
		ibc_error("boot mpi: %lld bytes of puts in one fence", sum);
		rc = IBC_ERR_INVAL;
		goto err_free;
	}
	all = malloc((size_t)sum + 1);
	if (all == NULL)
		goto err_free;
	err = MPI_Allgatherv(mine, my_count, MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS) {
		rc = mpi_fail("MPI_Allgatherv (fence)", err);
		goto err_free;
	}
	for (off = 0; off + 8 <= (size_t)sum;) {
		char *key;

		memcpy(&kl, all + off, 4);
		memcpy(&vl, all + off + 4 + kl, 4);
		key = malloc((size_t)kl + 1);
		if (key == NULL)
			goto err_free;
		memcpy(key, all + off + 4, kl);
		key[kl] = '\0';
		e = kv_new(key, all + off + 8 + kl, vl);
		free(key);
		if (e == NULL)
			goto err_free;
		kv_insert(&m->table, e);
		off += 8 + (size_t)kl + vl;
	}
	kv_free_list(m->pending);
	m->pending = NULL;
	rc = IBC_OK;
err_free:
	free(all);
	free(displs);
	free(counts);
	free(mine);
	return rc;
}

static int mpi_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{
	struct mpi_boot *m = b->priv;
	struct kv *e;

	for (e = m->table; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			break;
	if (e == NULL)
		return IBC_ERR_NOTFOUND;
	if (len != NULL)
		*len = e->len;
	if (e->len > cap) {
		ibc_error("boot mpi: value of '%s' has %zu bytes, buffer %zu", key, e->len, cap);
		return IBC_ERR_INVAL;
	}
	if (e->len > 0)
		memcpy(val, e->val, e->len);
	return IBC_OK;
}

static void mpi_abort(struct ibc_boot *b, int code, const char *why)
{
	(void)b;
	ibc_error("boot mpi: abort (code %d): %s", code, why ? why : "");
	MPI_Abort(MPI_COMM_WORLD, code < 0 ? -code : (code == 0 ? 1 : code));
}

static int mpi_close(struct ibc_boot *b)
{
	struct mpi_boot *m = b->priv;
	int err, rc = IBC_OK, fin = 0;

	err = MPI_Barrier(MPI_COMM_WORLD);
	if (err != MPI_SUCCESS)
		rc = mpi_fail("MPI_Barrier (close)", err);
	if (m->node_comm != MPI_COMM_NULL)
		MPI_Comm_free(&m->node_comm);
	kv_free_list(m->pending);
	kv_free_list(m->table);
	if (m->we_initialised && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
		MPI_Finalize();
	free(m);
	return rc;
}

static const struct ibc_boot_ops mpi_ops = {
	.name = "mpi",
	.allgather = mpi_allgather,
	.gather = mpi_gather,
	.bcast = mpi_bcast,
	.barrier = mpi_barrier,
	.put = mpi_put,
	.fence = mpi_fence,
	.get = mpi_get,
	.abort = mpi_abort,
	.close = mpi_close,
};

int ibc_boot_mpi_open(int *argc, char ***argv, struct ibc_boot **out)
{
	struct mpi_boot *m;
	int init = 0, err, rc, r, local0, *leaders = NULL, nodes = 0;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return IBC_ERR_NOMEM;
	m->node_comm = MPI_COMM_NULL;
	if (MPI_Initialized(&init) != MPI_SUCCESS || !init) {
		err = MPI_Init(argc, argv);
		if (err != MPI_SUCCESS) {
			ibc_error("boot mpi: MPI_Init failed (%d)", err);
			rc = IBC_ERR_SYS;
			goto err_free_handle;
		}
		m->we_initialised = 1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &m->boot.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &m->boot.size);
	err = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->boot.rank,
				  MPI_INFO_NULL, &m->node_comm);
	if (err != MPI_SUCCESS) {
		rc = mpi_fail("MPI_Comm_split_type", err);
		goto err_finalize;
	}
	MPI_Comm_rank(m->node_comm, &m->boot.local_rank);
	MPI_Comm_size(m->node_comm, &m->boot.local_size);
	/* the node's lowest world rank identifies it; leaders in rank order */
	local0 = m->boot.rank;
	err = MPI_Allreduce(MPI_IN_PLACE, &local0, 1, MPI_INT, MPI_MIN, m->node_comm);
	if (err != MPI_SUCCESS) {
		rc = mpi_fail("MPI_Allreduce (node leader)", err);
		goto err_free_comm;
	}
	leaders = malloc(sizeof(int) * (size_t)m->boot.size);
	if (leaders == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_free_comm;
	}
	err = MPI_Allgather(&local0, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
	if (err != MPI_SUCCESS) {
		rc = mpi_fail("MPI_Allgather (node leaders)", err);
		goto err_free_leaders;
	}
	/* a rank r is a leader when leaders[r] == r; node id = count of leaders below */
	for (r = 0; r < m->boot.size; r++) {
		if (leaders[r] != r)
			continue;
		if (r == local0)
			m->boot.node_id = nodes;
		nodes++;
	}
	m->boot.num_nodes = nodes;
	free(leaders);
	m->boot.ops = &mpi_ops;
	m->boot.priv = m;
	*out = &m->boot;
	return IBC_OK;

err_free_leaders:
	free(leaders);
err_free_comm:
	MPI_Comm_free(&m->node_comm);
err_finalize:
	if (m->we_initialised)
		MPI_Finalize();
err_free_handle:
	free(m);
	return rc;
}
