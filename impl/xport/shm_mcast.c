/* shm transport, multicast: a group is a ring of datagram slots in its own
 * segment; a send is one publish, each member reads from where it joined
 * into its posted receives.  See xport_shm.c for the design. */
#define _GNU_SOURCE
#include "xport/shm_priv.h"

#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ sending ---- */

/* One publish into the group's ring, whatever the number of members. */
int ibc_xport_shm_mcast_send(struct shm *st, struct ibc_xport *x, const struct ibc_xport_wr *wr)
{
	struct iovec iov[IBC_XPORT_MAX_SGE];
	struct group *g = wr->mcast->priv;
	struct grp_slot *slot;
	uint64_t total, n;
	unsigned char *d;
	int r = ibc_xport_shm_local_iov(st, wr, 0, iov, &total);

	if (r != RS_OK)
		return ibc_xport_shm_complete_send(st, wr, r, 0);
	n = atomic_fetch_add_explicit(&g->seg->head, 1, memory_order_acq_rel);
	slot = &g->seg->slots[n % SHM_GROUP_DEPTH];
	/* readers of the slot's previous lap see it change under them */
	atomic_store_explicit(&slot->seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	d = grp_data(g->seg, slot, (uint32_t)total);
	for (int i = 0; i < wr->num_sge; i++) {
		memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
	slot->len = (uint32_t)total;
	slot->src = x->rank;
	atomic_store_explicit(&slot->seq, n + 1, memory_order_release);
	return ibc_xport_shm_complete_send(st, wr, RS_OK, (uint32_t)total);
}

/* A member reads the datagrams published since its cursor into its posted
 * receives (in order; a datagram waits in the ring for a receive buffer). */
void ibc_xport_shm_group_pull(struct shm *st, struct ibc_xport *x, struct group *g)
{
	struct shm_ring *rr = ring_at(st->me, ring_group(st->me, g->slot));

	for (;;) {
		struct grp_slot *gs = &g->seg->slots[g->cursor % SHM_GROUP_DEPTH];
		uint64_t v = atomic_load_explicit(&gs->seq, memory_order_acquire), seq;
		struct shm_slot *rs;
		struct iovec iov;
		uint32_t len;
		int src;

		if (v > g->cursor + 1) {
			/* overwritten: this member fell a whole ring behind */
			st->stats.mcast_overrun += v - 1 - g->cursor;
			ibc_debug("shm: group %#x: %llu datagrams overwritten before this member read them",
				  g->pub.id, (unsigned long long)(v - 1 - g->cursor));
			g->cursor = v - 1;
			continue;
		}
		if (v != g->cursor + 1)
			return; /* nothing new (or being written) */
		len = gs->len;
		src = gs->src;
		if (len > SHM_MCAST_MTU)
			len = SHM_MCAST_MTU;
		memcpy(g->bounce, grp_data(g->seg, gs, len), len);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&gs->seq, memory_order_relaxed) != v)
			continue; /* overwritten while copied: the check above counts it */
		if (src == x->rank && !x->caps.mcast_loopback) {
			g->cursor++;
			continue;
		}
		if (rng_drop(st, x->params.mcast_drop)) {
			g->pub.dropped++;
			st->stats.mcast_dropped++;
			g->cursor++;
			continue;
		}
		rs = ring_claim(rr, &seq);
		if (rs == NULL)
			return; /* no receive posted yet: it waits in the ring */
		iov.iov_base = g->bounce;
		iov.iov_len = len;
		(void)ibc_xport_shm_deliver(st, x->rank, rs, seq, &iov, 1, len,
					    IBC_XPORT_OP_MCAST_RECV, 0, 0);
		g->cursor++;
	}
}

/* ---------------------------------------------------- multicast ------- */

/* Maps the group's segment, making it when this process is the first. */
static int group_map(struct shm *st, struct group *g)
{
	size_t len = sizeof(struct grp_seg);
	int fd, tries;
	struct stat sb;
	void *m;

	snprintf(g->segname, sizeof(g->segname), "%s-g%08x", st->prefix, g->pub.id);
	fd = shm_open(g->segname, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		g->created = 1;
		if (ftruncate(fd, (off_t)len) != 0) {
			ibc_error("shm: ftruncate(%s): %s", g->segname, strerror(errno));
			close(fd);
			shm_unlink(g->segname);
			return IBC_ERR_SYS;
		}
	} else if (errno == EEXIST) {
		fd = shm_open(g->segname, O_RDWR, 0600);
	}
	if (fd < 0) {
		ibc_error("shm: shm_open(%s): %s", g->segname, strerror(errno));
		return IBC_ERR_SYS;
	}
	/* a member that joins while the creator sizes it waits for the size */
	for (tries = 0; fstat(fd, &sb) == 0 && (size_t)sb.st_size < len && tries < 10000; tries++)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	if ((size_t)sb.st_size < len) {
		ibc_error("shm: group segment %s never got its size", g->segname);
		close(fd);
		return IBC_ERR_SYS;
	}
	/* populated: the ring's first lap would otherwise fault a page into the
	 * sender and every member per datagram (a slot is a page), which
	 * multicast hardware does not cost (RGM on shm: 3.7 us a barrier for the
	 * first 1024 of each group, 0.5 after) */
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		ibc_error("shm: mmap(%s): %s", g->segname, strerror(errno));
		return IBC_ERR_SYS;
	}
	g->seg = m;
	if (g->created) {
		g->seg->id = g->pub.id;
		g->seg->depth = SHM_GROUP_DEPTH;
		g->seg->mtu = SHM_MCAST_MTU;
		atomic_store_explicit(&g->seg->magic, SHM_GROUP_MAGIC, memory_order_release);
	}
	for (tries = 0; atomic_load_explicit(&g->seg->magic, memory_order_acquire) != SHM_GROUP_MAGIC &&
			tries < 10000; tries++)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	if (atomic_load_explicit(&g->seg->magic, memory_order_acquire) != SHM_GROUP_MAGIC ||
	    g->seg->id != g->pub.id) {
		ibc_error("shm: group segment %s is not group %#x's", g->segname, g->pub.id);
		munmap(g->seg, len);
		g->seg = NULL;
		return IBC_ERR_PROTO;
	}
	g->cursor = atomic_load_explicit(&g->seg->head, memory_order_acquire);
	return IBC_OK;
}

int ibc_xport_shm_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			     struct ibc_xport_mcast **out)
{
	struct shm *st = st_of(x);
	struct group *g;
	int slot = -1, rc;

	if (name != NULL)
		id = ibc_xport_mcast_id_from_name(name);
	for (int s = 0; s < SHM_MCAST_SLOTS; s++) {
		if (st->groups[s] != NULL && st->groups[s]->pub.id == id) {
			ibc_error("shm: mcast_join: already a member of group %#x", id);
			return IBC_ERR_INVAL;
		}
		if (st->groups[s] == NULL && slot < 0)
			slot = s;
	}
	if (slot < 0) {
		ibc_error("shm: mcast_join: at most %d groups per process", SHM_MCAST_SLOTS);
		return IBC_ERR_NOMEM;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		ibc_error("shm: out of memory joining a group");
		return IBC_ERR_NOMEM;
	}
	g->slot = slot;
	g->pub.id = id;
	g->pub.mtu = SHM_MCAST_MTU;
	if (name != NULL)
		snprintf(g->pub.name, sizeof(g->pub.name), "%s", name);
	else
		snprintf(g->pub.name, sizeof(g->pub.name), "id:%u", id);
	g->pub.priv = g;
	rc = group_map(st, g);
	if (rc != IBC_OK) {
		free(g);
		return rc;
	}
	/* the slot's receive ring starts empty */
	{
		struct shm_ring *r = ring_at(st->me, ring_group(st->me, slot));
		uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

		atomic_store_explicit(&r->claim, h, memory_order_relaxed);
		r->tail = h;
	}
	st->groups[slot] = g;
	*out = &g->pub;
	return IBC_OK;
}

/* Leaves: posted receives are dropped unreported, the segment unmapped (its
 * name stays until close when this process made it: others may join later). */
void ibc_xport_shm_group_release(struct shm *st, struct group *g)
{
	struct shm_ring *r = ring_at(st->me, ring_group(st->me, g->slot));
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	atomic_store_explicit(&r->claim, h, memory_order_relaxed);
	r->tail = h;
	munmap(g->seg, sizeof(struct grp_seg));
	g->seg = NULL;
	st->groups[g->slot] = NULL;
	if (g->created && st->ngone == st->gone_cap) {
		size_t cap = st->gone_cap ? 2 * st->gone_cap : 16;
		void *n = realloc(st->gone, cap * sizeof(*st->gone));

		if (n != NULL) {
			st->gone = n;
			st->gone_cap = cap;
		}
	}
	if (g->created && st->ngone < st->gone_cap)
		memcpy(st->gone[st->ngone++], g->segname, SHM_NAME_MAX);
	else if (g->created)
		shm_unlink(g->segname); /* no memory to remember it: now */
	free(g);
}

int ibc_xport_shm_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *gp)
{
	struct shm *st = st_of(x);
	struct group *g = gp->priv;

	if (g == NULL || g->slot < 0 || g->slot >= SHM_MCAST_SLOTS || st->groups[g->slot] != g) {
		ibc_error("shm: mcast_leave: not a group of this instance");
		return IBC_ERR_INVAL;
	}
	ibc_xport_shm_group_release(st, g);
	return IBC_OK;
}
