/* The node sync: a central barrier for the ranks of one node in a shared
 * segment (ibc_boot_shm_map), the harness's default sync step when the
 * bootstrap's own barrier is a network round trip (see harness.h).  The last
 * rank to arrive resets the count and publishes the barrier's epoch (1, 2,
 * ...); the others wait for the epoch with ibc_wait_u64.  The count and the
 * epoch live on separate cache lines. */
#include "harness/harness.h"
#include "core/log.h"
#include "core/status.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CL 64
#define NODE_SYNC_SPIN_NS 20000 /* pure spin this long, then spin-yield */

struct node_sync_shared {
	_Alignas(CL) _Atomic unsigned count;
	_Alignas(CL) uint64_t epoch;  /* the last barrier every rank arrived at */
};

struct ibc_node_sync {
	struct node_sync_shared *sh;
	uint64_t epoch;     /* this rank's barriers so far */
	unsigned size;
	enum ibc_wait wait;
	int64_t timeout_ns;
};

int ibc_node_sync_open(struct ibc_boot *b, enum ibc_wait w, double timeout_s,
		       struct ibc_node_sync **out)
{
	struct ibc_node_sync *s;
	void *map;
	int rc;

	*out = NULL;
	if (b->num_nodes != 1) {
		if (b->rank == 0)
			ibc_error("node sync: the ranks are on %d nodes; it serves one", b->num_nodes);
		return IBC_ERR_UNSUPPORTED;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return IBC_ERR_NOMEM; /* peers block in the mapping: best effort */
	rc = ibc_boot_shm_map(b, 0, "sync", sizeof(struct node_sync_shared), 1, &map);
	if (rc != IBC_OK) {
		free(s);
		return rc;
	}
	s->sh = map;
	s->size = (unsigned)b->size;
	s->wait = w;
	s->timeout_ns = timeout_s > 0 ? (int64_t)(timeout_s * 1e9) : -1;
	*out = s;
	return IBC_OK;
}

int ibc_node_sync(struct ibc_node_sync *s, int (*progress)(void *arg), void *arg)
{
	int rc;

	s->epoch++;
	if (atomic_fetch_add_explicit(&s->sh->count, 1, memory_order_acq_rel) == s->size - 1) {
		atomic_store_explicit(&s->sh->count, 0, memory_order_relaxed);
		__atomic_store_n(&s->sh->epoch, s->epoch, __ATOMIC_RELEASE);
		return IBC_OK;
	}
	/* a spinning waiter yields after a while all the same: the ranks may
	 * share a PU that the harness does not know of (the probe's same-PU
	 * variant pins them so), where a pure spin waits out a scheduler tick */
	rc = IBC_ERR_TIMEOUT;
	if (s->wait == IBC_WAIT_SPIN)
		rc = ibc_wait_u64(&s->sh->epoch, s->epoch, IBC_WAIT_SPIN, NODE_SYNC_SPIN_NS, progress,
				  arg, NULL);
	if (rc == IBC_ERR_TIMEOUT)
		rc = ibc_wait_u64(&s->sh->epoch, s->epoch, IBC_WAIT_SPIN_YIELD, s->timeout_ns, progress,
				  arg, NULL);
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("node sync: a rank of this node did not arrive within %.1f s",
			  (double)s->timeout_ns / 1e9);
	return rc;
}

void ibc_node_sync_close(struct ibc_node_sync *s)
{
	if (s == NULL)
		return;
	munmap(s->sh, sizeof(struct node_sync_shared));
	free(s);
}
