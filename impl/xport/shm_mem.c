/* shm transport, memory: the segments, this process's registrations (a table
 * in its control segment that peers read), the check of every access against
 * a peer's table, and the copies (stores into a mapped segment, else
 * process_vm_readv/writev).  See xport_shm.c for the design. */
#define _GNU_SOURCE
#include "xport/shm_priv.h"
#include "xport/shm_store.h"

#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---------------------------------------------------- segment mapping ---- */

int ibc_xport_shm_seg_create(const char *name, size_t len, int *fd_out, void **map_out,
			     struct stat *sb)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	void *m;

	if (fd < 0) {
		ibc_error("shm: shm_open(%s): %s", name, strerror(errno));
		return IBC_ERR_SYS;
	}
	if (ftruncate(fd, (off_t)len) != 0) {
		ibc_error("shm: ftruncate(%s, %zu): %s", name, len, strerror(errno));
		goto err_unlink;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		ibc_error("shm: mmap(%s, %zu): %s", name, len, strerror(errno));
		goto err_unlink;
	}
	if (fstat(fd, sb) != 0) {
		ibc_error("shm: fstat(%s): %s", name, strerror(errno));
		munmap(m, len);
		goto err_unlink;
	}
	*fd_out = fd;
	*map_out = m;
	return IBC_OK;

err_unlink:
	close(fd);
	shm_unlink(name);
	return IBC_ERR_SYS;
}

/* Opens a peer's segment through /proc (procfd) or by name; checks the inode. */
int ibc_xport_shm_seg_open_peer(struct shm *st, pid_t pid, int fd, const char *name, uint64_t ino,
				uint64_t dev, size_t len, int try_proc, void **out)
{
	char path[96];
	struct stat sb;
	int pfd = -1;
	void *m;

	if (try_proc) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		pfd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (pfd < 0 && name != NULL)
		pfd = shm_open(name, O_RDWR, 0600);
	if (pfd < 0)
		return IBC_ERR_SYS;
	if (fstat(pfd, &sb) != 0 || (uint64_t)sb.st_ino != ino || (uint64_t)sb.st_dev != dev ||
	    (size_t)sb.st_size < len) {
		close(pfd);
		return IBC_ERR_NOTFOUND;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	close(pfd);
	if (m == MAP_FAILED)
		return IBC_ERR_SYS;
	(void)st;
	*out = m;
	return IBC_OK;
}

/* ------------------------------------------------------- resolution ------ */

struct ent_snap {
	uint32_t access, kind, seq;
	int32_t fd;
	uint64_t addr, len, seg_len, ino, dev;
};

static void *peer_seg_map(struct shm *st, int peer, uint32_t idx, uint32_t key,
			  const struct ent_snap *e)
{
	struct peer *p = &st->peers[peer];
	struct seg_map *m;
	char name[SHM_NAME_MAX];
	void *base;

	if (p->maps == NULL) {
		p->maps = calloc(SHM_MR_MAX, sizeof(*p->maps));
		if (p->maps == NULL)
			return NULL;
	}
	m = &p->maps[idx];
	if (m->base != NULL && m->rkey == key)
		return m->base;
	if (m->base != NULL) {
		munmap(m->base, m->len);
		m->base = NULL;
		m->rkey = 0;
	}
	snprintf(name, sizeof(name), "%s-r%d-m%u", st->prefix, peer, e->seq);
	if (ibc_xport_shm_seg_open_peer(st, p->pid, e->fd, st->procfd ? NULL : name, e->ino, e->dev,
					e->seg_len, st->procfd, &base) != IBC_OK)
		return NULL;
	m->base = base;
	m->len = e->seg_len;
	m->rkey = key;
	return base;
}

/* Checks [addr, addr + len) against peer's registration key with access need;
 * fills t or returns a reason. */
int ibc_xport_shm_resolve(struct shm *st, int peer, int self, uint32_t key, uint64_t addr,
			  uint64_t len, unsigned need, struct target *t)
{
	struct shm_ctl *c = st->peers[peer].ctl;
	struct rcache *rc = shm_rcache_of(&st->peers[peer], key);
	struct shm_mr_ent *ent;
	struct ent_snap e;
	uint32_t idx, k;
	char *hit;

	if (key == 0)
		return RS_BAD_RKEY;
	if (!self && (hit = shm_rcache_hit(rc, key, addr, len, need)) != NULL) {
		t->kind = T_PTR;
		t->ptr = hit;
		t->len = len;
		t->pid = st->peers[peer].pid;
		return RS_OK;
	}
	st->stats.key_lookups++;
	idx = (key ^ c->salt) & SHM_MR_IDX_MASK;
	ent = &c->mrs[idx];
	k = atomic_load_explicit(&ent->rkey, memory_order_acquire);
	if (k != key)
		return atomic_load_explicit(&ent->dead_rkey, memory_order_relaxed) == key ?
			       RS_DEREG : RS_BAD_RKEY;
	e.access = ent->access;
	e.kind = ent->kind;
	e.seq = ent->seq;
	e.fd = ent->fd;
	e.addr = ent->addr;
	e.len = ent->len;
	e.seg_len = ent->seg_len;
	e.ino = ent->ino;
	e.dev = ent->dev;
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&ent->rkey, memory_order_relaxed) != key)
		return RS_DEREG;
	if ((e.access & need) != need)
		return RS_PERM;
	if (addr < e.addr || len > e.len || addr - e.addr > e.len - len)
		return RS_RANGE;
	t->len = len;
	t->pid = st->peers[peer].pid;
	if (self) {
		t->kind = T_PTR;
		t->ptr = (char *)(uintptr_t)addr;
		return RS_OK;
	}
	if (e.kind == SHM_KIND_SEG) {
		char *base = peer_seg_map(st, peer, idx, key, &e);
		if (base == NULL)
			return atomic_load_explicit(&ent->rkey, memory_order_acquire) == key ? RS_MAP
											   : RS_DEREG;
		t->kind = T_PTR;
		t->ptr = base + (addr - e.addr);
		*rc = (struct rcache){ .key = key, .access = e.access, .live = &ent->rkey,
				       .addr = e.addr, .len = e.len, .base = base };
		return RS_OK;
	}
	t->kind = T_PVM;
	t->raddr = addr;
	return RS_OK;
}

/* Local sges: each must lie in one of this process's registrations with access
 * need; builds the iovec list.  Inline WRs skip the key check. */
int ibc_xport_shm_local_iov(struct shm *st, const struct ibc_xport_wr *wr, unsigned need,
			    struct iovec *iov, uint64_t *total)
{
	uint64_t sum = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibc_xport_sge *s = &wr->sge[i];
		iov[i].iov_base = (void *)(uintptr_t)s->addr;
		iov[i].iov_len = s->len;
		sum += s->len;
		if (wr->flags & IBC_XPORT_WR_INLINE)
			continue;
		if (s->len != 0 && !shm_local_sge_ok(st, s, need))
			return RS_LOCAL_PROT;
	}
	*total = sum;
	return RS_OK;
}

/* ----------------------------------------------------- data movement ---- */

typedef ssize_t (*pvm_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
			  unsigned long, unsigned long);

/* Moves len bytes between the local iov list and [raddr, raddr+len) of pid with
 * process_vm_writev (write) or process_vm_readv (read), resuming after short
 * transfers. */
static int pvm_copy(pvm_fn fn, pid_t pid, const struct iovec *liov, int n, uint64_t raddr,
		    uint64_t len)
{
	struct iovec riov;
	uint64_t done = 0;
	struct iovec tmp[IBC_XPORT_MAX_SGE];
	int cnt = n;

	memcpy(tmp, liov, (size_t)n * sizeof(*liov));
	while (done < len) {
		ssize_t w;
		riov.iov_base = (void *)(uintptr_t)(raddr + done);
		riov.iov_len = len - done;
		w = fn(pid, tmp + (n - cnt), (unsigned long)cnt, &riov, 1, 0);
		if (w <= 0)
			return RS_PVM;
		done += (uint64_t)w;
		/* skip what was moved */
		while (w > 0 && cnt > 0) {
			struct iovec *v = &tmp[n - cnt];
			if ((size_t)w >= v->iov_len) {
				w -= (ssize_t)v->iov_len;
				cnt--;
			} else {
				v->iov_base = (char *)v->iov_base + w;
				v->iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	return RS_OK;
}

/* gather local iov -> one target range */
int ibc_xport_shm_copy_to(const struct target *t, const struct iovec *iov, int n, uint64_t total)
{
	if (total == 0)
		return RS_OK;
	if (t->kind == T_PTR) {
		char *d = t->ptr;
		if (n == 1) {
			shm_store(d, iov[0].iov_base, total);
			return RS_OK;
		}
		/* the last entry goes last, its last word last (shm_store) */
		for (int i = 0; i < n - 1; i++) {
			memcpy(d, iov[i].iov_base, iov[i].iov_len);
			d += iov[i].iov_len;
		}
		atomic_thread_fence(memory_order_release);
		shm_store(d, iov[n - 1].iov_base, iov[n - 1].iov_len);
		return RS_OK;
	}
	return pvm_copy(process_vm_writev, t->pid, iov, n, t->raddr, total);
}

/* one target range -> scatter local iov */
int ibc_xport_shm_copy_from(const struct target *t, const struct iovec *iov, int n, uint64_t total)
{
	if (total == 0)
		return RS_OK;
	if (t->kind == T_PTR) {
		const char *s = t->ptr;
		for (int i = 0; i < n; i++) {
			memcpy(iov[i].iov_base, s, iov[i].iov_len);
			s += iov[i].iov_len;
		}
		return RS_OK;
	}
	return pvm_copy(process_vm_readv, t->pid, iov, n, t->raddr, total);
}

/* gather local iov -> scatter over several target ranges (a receive's sges) */
int ibc_xport_shm_copy_scatter(const struct target *dst, int ndst, const struct iovec *iov, int n,
			       uint64_t total)
{
	struct iovec part[IBC_XPORT_MAX_SGE];
	int si = 0;
	size_t soff = 0;
	uint64_t left = total;

	for (int d = 0; d < ndst && left > 0; d++) {
		uint64_t want = dst[d].len < left ? dst[d].len : left;
		uint64_t got = 0;
		int np = 0;
		struct target t = dst[d];
		int r;

		while (got < want && si < n) {
			size_t avail = iov[si].iov_len - soff;
			size_t take = avail < want - got ? avail : (size_t)(want - got);
			if (take > 0) {
				part[np].iov_base = (char *)iov[si].iov_base + soff;
				part[np].iov_len = take;
				np++;
			}
			got += take;
			soff += take;
			if (soff == iov[si].iov_len) {
				si++;
				soff = 0;
			}
			if (np == IBC_XPORT_MAX_SGE && got < want) {
				/* flush this batch and go on with the rest of the range */
				r = ibc_xport_shm_copy_to(&t, part, np, got);
				if (r != RS_OK)
					return r;
				if (t.kind == T_PTR)
					t.ptr += got;
				else
					t.raddr += got;
				want -= got;
				left -= got;
				got = 0;
				np = 0;
			}
		}
		r = ibc_xport_shm_copy_to(&t, part, np, got);
		if (r != RS_OK)
			return r;
		left -= got;
	}
	return RS_OK;
}

/* ------------------------------------------------------ memory --------- */

static int mr_slot(struct shm *st, int *idx)
{
	for (int i = 0; i < SHM_MR_MAX; i++) {
		if (st->mrs[i] == NULL) {
			*idx = i;
			return IBC_OK;
		}
	}
	ibc_error("shm: too many memory registrations (max %d)", SHM_MR_MAX);
	return IBC_ERR_NOMEM;
}

static uint32_t mr_key(struct shm *st, int idx)
{
	uint32_t key;

	do {
		st->gen[idx] = (st->gen[idx] + 1) & ((1u << (32 - SHM_MR_IDX_BITS)) - 1);
		if (st->gen[idx] == 0)
			st->gen[idx] = 1;
		key = ((st->gen[idx] << SHM_MR_IDX_BITS) | (uint32_t)idx) ^ st->me->salt;
	} while (key == 0);
	return key;
}

static void mr_publish(struct shm *st, struct own_mr *m, unsigned access,
		       const struct stat *sb, uint32_t seq)
{
	struct shm_mr_ent *e = &st->me->mrs[m->idx];
	uint32_t key = mr_key(st, m->idx);

	e->access = access;
	e->kind = (uint32_t)m->kind;
	e->addr = (uint64_t)(uintptr_t)m->pub.addr;
	e->len = m->pub.len;
	e->seg_len = m->map_len;
	e->ino = sb != NULL ? (uint64_t)sb->st_ino : 0;
	e->dev = sb != NULL ? (uint64_t)sb->st_dev : 0;
	e->fd = m->fd;
	e->seq = seq;
	atomic_store_explicit(&e->rkey, key, memory_order_release);

	m->pub.lkey = key;
	m->pub.rkey = key;
	m->pub.access = access;
	memset(&m->pub.rdesc, 0, sizeof(m->pub.rdesc));
	m->pub.rdesc.addr = e->addr;
	m->pub.rdesc.len = e->len;
	m->pub.rdesc.rkey = key;
	m->pub.rdesc.rank = st->me->rank;
	m->pub.rdesc.flags = (uint32_t)m->kind;
	m->pub.priv = m;
	st->mrs[m->idx] = m;
	st->stats.mrs++;
	st->stats.mr_bytes += m->pub.len;
}

int ibc_xport_shm_mr_reg(struct ibc_xport *x, void *addr, size_t len, unsigned access,
			 struct ibc_xport_mr **out)
{
	struct shm *st = st_of(x);
	struct own_mr *m;
	int idx, rc = mr_slot(st, &idx);

	if (rc != IBC_OK)
		return rc;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		ibc_error("shm: out of memory registering %zu bytes", len);
		return IBC_ERR_NOMEM;
	}
	m->idx = idx;
	m->kind = SHM_KIND_USER;
	m->fd = -1;
	m->pub.addr = addr;
	m->pub.len = len;
	mr_publish(st, m, access, NULL, 0);
	*out = &m->pub;
	return IBC_OK;
}

int ibc_xport_shm_mr_alloc(struct ibc_xport *x, size_t len, unsigned access,
			   struct ibc_xport_mr **out)
{
	struct shm *st = st_of(x);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t seg_len = (len + pg - 1) / pg * pg;
	struct own_mr *m;
	struct stat sb;
	uint32_t seq;
	int idx, rc = mr_slot(st, &idx);

	if (rc != IBC_OK)
		return rc;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		ibc_error("shm: out of memory allocating %zu bytes", len);
		return IBC_ERR_NOMEM;
	}
	seq = ++st->seg_seq;
	snprintf(m->name, sizeof(m->name), "%s-r%d-m%u", st->prefix, x->rank, seq);
	rc = ibc_xport_shm_seg_create(m->name, seg_len, &m->fd, &m->map, &sb);
	if (rc != IBC_OK)
		goto err_free_mr;
	if (st->procfd) {
		shm_unlink(m->name); /* peers open it through /proc/<pid>/fd */
	} else {
		m->named = 1;
	}
	m->idx = idx;
	m->kind = SHM_KIND_SEG;
	m->map_len = seg_len;
	m->pub.addr = m->map;
	m->pub.len = len;
	mr_publish(st, m, access, &sb, seq);
	*out = &m->pub;
	return IBC_OK;

err_free_mr:
	free(m);
	return rc;
}

void ibc_xport_shm_mr_release(struct shm *st, struct own_mr *m)
{
	struct shm_mr_ent *e = &st->me->mrs[m->idx];
	uint32_t key = atomic_load_explicit(&e->rkey, memory_order_relaxed);

	atomic_store_explicit(&e->dead_rkey, key, memory_order_relaxed);
	atomic_store_explicit(&e->rkey, 0, memory_order_release);
	st->mrs[m->idx] = NULL;
	st->stats.mrs--;
	st->stats.mr_bytes -= m->pub.len;
	if (m->kind == SHM_KIND_SEG) {
		munmap(m->map, m->map_len);
		close(m->fd);
		if (m->named)
			shm_unlink(m->name);
	}
	free(m);
}

int ibc_xport_shm_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr)
{
	struct shm *st = st_of(x);
	struct own_mr *m = mr->priv;

	if (m == NULL || m->idx < 0 || m->idx >= SHM_MR_MAX || st->mrs[m->idx] != m) {
		ibc_error("shm: mr_dereg: not a registration of this instance");
		return IBC_ERR_INVAL;
	}
	ibc_xport_shm_mr_release(st, m);
	return IBC_OK;
}
