/* Where each rank is, for the runner that launched it: see progress.h. */
#include "core/progress.h"
#include "core/log.h"
#include "core/status.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC sizeof(struct ibc_progress_rec)

/* this process's record: mapped for `rank` (a forked rank maps its own) */
static struct {
	int rank;
	void *map;
	struct ibc_progress_rec *rec;
} me = { -1, NULL, NULL };

static void field_set(char *dst, size_t cap, const char *s)
{
	size_t n = s != NULL ? strnlen(s, cap - 1) : 0;

	memcpy(dst, s != NULL ? s : "", n);
	dst[n] = '\0';
}

/* Maps the page of path that holds rank's record; me.rec stays NULL
 * without IBC_PROGRESS or when the file is not here or too short. */
static void attach(int rank)
{
	const char *path = getenv("IBC_PROGRESS");
	long page = sysconf(_SC_PAGESIZE);
	off_t at = (off_t)rank * (off_t)REC, base;
	struct stat sb;
	void *m;
	int fd;

	if (me.map != NULL)
		munmap(me.map, (size_t)page);
	me.rank = rank;
	me.map = NULL;
	me.rec = NULL;
	if (path == NULL || path[0] == '\0' || rank < 0 || page <= 0 ||
	    (fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return;
	base = at - at % page;
	m = fstat(fd, &sb) == 0 && sb.st_size >= at + (off_t)REC ?
		    mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base) : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return;
	me.map = m;
	me.rec = (struct ibc_progress_rec *)((char *)m + (at - base));
	me.rec->pid = (int32_t)getpid();
	if (gethostname(me.rec->host, sizeof(me.rec->host)) != 0)
		me.rec->host[0] = '\0';
	me.rec->host[sizeof(me.rec->host) - 1] = '\0';
	__atomic_store_n(&me.rec->magic, IBC_PROGRESS_MAGIC, __ATOMIC_RELEASE);
}

void ibc_progress_in(int rank, const char *op)
{
	struct ibc_progress_rec *r;

	if (rank != me.rank)
		attach(rank);
	if ((r = me.rec) == NULL)
		return;
	field_set(r->coll, sizeof(r->coll), op);
	__atomic_store_n(&r->coll_in, r->coll_in + 1, __ATOMIC_RELEASE);
}

int ibc_progress_out(int rc)
{
	if (me.rec != NULL)
		__atomic_store_n(&me.rec->coll_out, me.rec->coll_in, __ATOMIC_RELEASE);
	return rc;
}

void ibc_progress_step(unsigned point, const char *variant, size_t bytes, const char *step)
{
	struct ibc_progress_rec *r = me.rec;

	if (r == NULL)
		return;
	r->point = point;
	r->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	field_set(r->variant, sizeof(r->variant), variant);
	field_set(r->step, sizeof(r->step), step);
}

int ibc_progress_create(const char *path, int n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || n < 1 || ftruncate(fd, (off_t)n * (off_t)REC) != 0) {
		ibc_error("progress: cannot make %s for %d ranks", path, n);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return IBC_ERR_IO;
	}
	close(fd);
	return IBC_OK;
}

/* ---------------------------------------------------------- reading ---- */
struct text {
	char *p;
	size_t cap, len;
};

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (t->len + 1 >= t->cap)
		return;
	va_start(ap, fmt);
	w = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	if (w > 0)
		t->len = t->len + (size_t)w < t->cap ? t->len + (size_t)w : t->cap - 1;
}

#define LIST_MAX 16 /* ranks named in one list; the rest are counted */

static int has(const struct ibc_progress_rec *r) { return r->magic == IBC_PROGRESS_MAGIC; }
static int inside(const struct ibc_progress_rec *r) { return has(r) && r->coll_in != r->coll_out; }

static int waits_in(const struct ibc_progress_rec *r, uint32_t k)
{
	return inside(r) && r->coll_in == k;
}

/* "ranks 0, 2 wait in their" or "rank 3 waits in its": the ranks in collective k */
static void waiters(struct text *t, const struct ibc_progress_rec *v, int n, uint32_t k)
{
	int r, c = 0, all = 0;

	for (r = 0; r < n; r++)
		all += waits_in(&v[r], k);
	put(t, all == 1 ? "rank" : "ranks");
	for (r = 0; r < n; r++) {
		if (!waits_in(&v[r], k))
			continue;
		if (c < LIST_MAX)
			put(t, "%s %d", c > 0 ? "," : "", r);
		c++;
	}
	if (c > LIST_MAX)
		put(t, " and %d more", c - LIST_MAX);
	put(t, all == 1 ? " waits in its" : " wait in their");
}

static void where(struct text *t, const struct ibc_progress_rec *r)
{
	if (r->point == 0)
		put(t, "before its first point");
	else
		put(t, "at point %u (%.31s, %u B): %.15s", r->point, r->variant, r->bytes, r->step);
}

static void who(struct text *t, const char *prefix, int rank, const struct ibc_progress_rec *r)
{
	put(t, "%srank %d (pid %d on %.39s)", prefix, rank, (int)r->pid, r->host);
}

/* Nobody waits in a bootstrap collective: the waits are the measured
 * code's own; where each rank was */
static void positions(struct text *t, const struct ibc_progress_rec *v, int n, const char *prefix)
{
	int r;

	put(t, "%sno rank waits in a bootstrap collective (they wait on each other in the measured "
	       "code); where each rank was:\n", prefix);
	for (r = 0; r < n && r < LIST_MAX; r++) {
		put(t, "%s  ", prefix);
		if (!has(&v[r])) {
			put(t, "rank %d: no record\n", r);
			continue;
		}
		who(t, "", r, &v[r]);
		put(t, ": ");
		where(t, &v[r]);
		put(t, "\n");
	}
	if (n > LIST_MAX)
		put(t, "%s  and %d more ranks\n", prefix, n - LIST_MAX);
}

/* The ranks that never entered collective k, which others wait in; their
 * count */
static int behind(struct text *t, const struct ibc_progress_rec *v, int n, uint32_t k, const char *prefix)
{
	int r, named = 0, first;

	for (r = 0; r < n; r++) {
		if ((has(&v[r]) && v[r].coll_in >= k) || named++ >= LIST_MAX)
			continue;
		if (!has(&v[r])) {
			put(t, "%srank %d did not answer: it wrote no record (it never reached a bootstrap "
			       "collective, or its host does not share the record's file)\n", prefix, r);
			continue;
		}
		who(t, prefix, r, &v[r]);
		put(t, " did not answer: it never entered its bootstrap collective %u; it was ", k);
		where(t, &v[r]);
		put(t, "\n");
	}
	if (named > LIST_MAX)
		put(t, "%sand %d more ranks did not answer\n", prefix, named - LIST_MAX);
	for (first = 0; !waits_in(&v[first], k); first++)
		;
	put(t, "%s", prefix);
	waiters(t, v, n, k);
	put(t, " bootstrap collective %u (%.15s), ", k, v[first].coll);
	where(t, &v[first]);
	put(t, "\n");
	return named;
}

int ibc_progress_blame(const char *path, int n, const char *prefix, char *out, size_t cap)
{
	struct text t = { out, cap, 0 };
	struct ibc_progress_rec *v;
	uint32_t k = 0;
	int fd, r, named = 0;
	ssize_t got;

	if (cap > 0)
		out[0] = '\0';
	if (n < 1 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	v = calloc((size_t)n, REC);
	got = v != NULL ? pread(fd, v, (size_t)n * REC, 0) : -1;
	close(fd);
	if (got < 0) {
		free(v);
		return -1;
	}
	for (r = 0; r < n; r++)
		if (inside(&v[r]) && v[r].coll_in > k)
			k = v[r].coll_in;
	for (r = 0; r < n && !has(&v[r]); r++)
		;
	if (r == n)
		put(&t, "%sno rank wrote a progress record (%s is not shared with the ranks' hosts, or no "
			"rank got to its first bootstrap collective)\n", prefix, path);
	else if (k == 0)
		positions(&t, v, n, prefix);
	else
		named = behind(&t, v, n, k, prefix);
	free(v);
	return named;
}
