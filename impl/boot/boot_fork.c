/* fork bootstrap: rank 0 (the caller) forks nprocs - 1 children on this host.
 * A MAP_SHARED|MAP_ANONYMOUS region made before fork carries everything:
 *   - a sense-reversing central barrier (atomics);
 *   - collectives through one slot of FORK_SLOT bytes per rank (larger
 *     messages go in chunks);
 *   - the bulletin board: an open-addressing table of FORK_KV_CAP entries,
 *     keys < FORK_KEY_MAX bytes, values <= FORK_VAL_MAX bytes.
 * Waits spin FORK_SPIN polls then sched_yield (ranks may outnumber cores).
 * Rank 0 watches its children with waitpid(WNOHANG) while it waits; a child
 * that dies sets the region's abort flag, and every waiter returns
 * IBC_ERR_CLOSED instead of hanging; the flag is also the process's job
 * abort flag (core/wait.h), so transport and algorithm waits end too.
 * Children die with rank 0 (PR_SET_PDEATHSIG); rank 0 learns of a child's
 * death through SIGCHLD (see on_sigchld). */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORK_MAX_PROCS 1024
#define FORK_SLOT (64 * 1024)
#define FORK_KV_CAP 4096
#define FORK_KEY_MAX 128
#define FORK_VAL_MAX 4096
#define FORK_SPIN 2000        /* polls before yielding when ranks fit the CPUs */
#define FORK_SPIN_OVERSUB 2   /* ... and when they outnumber them */
#define FORK_POLL_EVERY 256  /* yields between waitpid polls on rank 0 */
#define FORK_GRACE_S 10.0    /* after an abort: time given to children to exit */
#define CL 64

struct kv_entry {
	_Atomic int used;
	uint32_t len;
	char key[FORK_KEY_MAX];
	unsigned char val[FORK_VAL_MAX];
};

struct region {
	_Alignas(CL) _Atomic unsigned bar_count;
	_Alignas(CL) _Atomic unsigned bar_sense;
	_Alignas(CL) _Atomic int aborted;
	int abort_code;
	int abort_rank;
	_Alignas(CL) _Atomic int kv_lock;
	int kv_count;
	int nprocs;
	/* then: slots (nprocs * FORK_SLOT), then the kv table */
};

struct child {
	pid_t pid;
	int reaped;
	int status;
};

struct fork_boot {
	struct ibc_boot boot;
	struct region *reg;
	size_t reg_len;
	unsigned char *slots;
	struct kv_entry *kv;
	unsigned sense;          /* this process's barrier sense */
	unsigned long spin;      /* polls before sched_yield */
	struct child *children;  /* rank 0 only: index = rank */
};

static size_t region_len(int nprocs)
{
	size_t hdr = (sizeof(struct region) + CL - 1) / CL * CL;

	return hdr + (size_t)nprocs * FORK_SLOT + (size_t)FORK_KV_CAP * sizeof(struct kv_entry);
}

static void status_describe(int status, char *buf, size_t cap)
{
	if (WIFEXITED(status))
		snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "ended with wait status 0x%x", (unsigned)status);
}

static void abort_set(struct fork_boot *f, int code, int rank)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&f->reg->aborted, &expected, 1)) {
		f->reg->abort_code = code;
		f->reg->abort_rank = rank;
	}
}

/* Rank 0: reaps children that ended.  Returns the rank of a dead child, or
 * 0 when all are alive. */
static int children_poll(struct fork_boot *f)
{
	int r, status, dead = 0;
	pid_t p;

	for (r = 1; r < f->boot.size; r++) {
		if (!f->children[r].reaped) {
			p = waitpid(f->children[r].pid, &status, WNOHANG);
			if (p != f->children[r].pid)
				continue;
			f->children[r].reaped = 1;
			f->children[r].status = status;
		}
		if (dead == 0)
			dead = r;
	}
	return dead;
}

/* Waits until *word == want.  IBC_ERR_CLOSED when the job was aborted. */
static int wait_word(struct fork_boot *f, _Atomic unsigned *word, unsigned want)
{
	unsigned long n = 0;
	char how[96];
	int dead;

	for (;;) {
		if (atomic_load_explicit(word, memory_order_acquire) == want)
			return IBC_OK;
		if (atomic_load_explicit(&f->reg->aborted, memory_order_relaxed))
			return IBC_ERR_CLOSED;
		n++;
		if (n < f->spin)
			continue;
		sched_yield();
		if (f->boot.rank != 0 || (n - f->spin) % FORK_POLL_EVERY != 0)
			continue;
		dead = children_poll(f);
		if (dead == 0)
			continue;
		/* a child that passed this wait and then ended (e.g. after the
		 * closing barrier) is not a failure: look once more */
		if (atomic_load_explicit(word, memory_order_acquire) == want)
			return IBC_OK;
		status_describe(f->children[dead].status, how, sizeof(how));
		ibc_error("boot fork: rank %d (pid %d) %s while the job was running; aborting the job",
			  dead, (int)f->children[dead].pid, how);
		abort_set(f, IBC_ERR_CLOSED, dead);
		return IBC_ERR_CLOSED;
	}
}

static int fork_barrier(struct ibc_boot *b)
{
	struct fork_boot *f = b->priv;
	struct region *reg = f->reg;

	if (atomic_load(&reg->aborted))
		return IBC_ERR_CLOSED;
	f->sense ^= 1u;
	if (atomic_fetch_add_explicit(&reg->bar_count, 1, memory_order_acq_rel) ==
	    (unsigned)b->size - 1) {
		atomic_store_explicit(&reg->bar_count, 0, memory_order_relaxed);
		atomic_store_explicit(&reg->bar_sense, f->sense, memory_order_release);
		return IBC_OK;
	}
	return wait_word(f, &reg->bar_sense, f->sense);
}

static int root_check(struct ibc_boot *b, int root, const char *what)
{
	if (root < 0 || root >= b->size) {
		ibc_error("boot fork: %s root %d out of range (size %d)", what, root, b->size);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

/* gather to root (root < 0: everyone) in chunks of FORK_SLOT */
static int gather_any(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	struct fork_boot *f = b->priv;
	const unsigned char *s = send;
	unsigned char *d = recv;
	size_t off, chunk;
	int r, rc;

	for (off = 0; off < len || (len == 0 && off == 0); off += FORK_SLOT) {
		chunk = len - off < FORK_SLOT ? len - off : FORK_SLOT;
		if (chunk > 0)
			memcpy(f->slots + (size_t)b->rank * FORK_SLOT, s + off, chunk);
		rc = fork_barrier(b);
		if (rc != IBC_OK)
			return rc;
		if ((root < 0 || root == b->rank) && chunk > 0)
			for (r = 0; r < b->size; r++)
				memcpy(d + (size_t)r * len + off, f->slots + (size_t)r * FORK_SLOT, chunk);
		rc = fork_barrier(b);
		if (rc != IBC_OK)
			return rc;
		if (len == 0)
			break;
	}
	return IBC_OK;
}

static int fork_allgather(struct ibc_boot *b, const void *send, void *recv, size_t len)
{
	return gather_any(b, send, recv, len, -1);
}

static int fork_gather(struct ibc_boot *b, const void *send, void *recv, size_t len, int root)
{
	int rc = root_check(b, root, "gather");

	return rc != IBC_OK ? rc : gather_any(b, send, recv, len, root);
}

static int fork_bcast(struct ibc_boot *b, void *buf, size_t len, int root)
{
	struct fork_boot *f = b->priv;
	unsigned char *p = buf;
	size_t off, chunk;
	int rc = root_check(b, root, "bcast");

	if (rc != IBC_OK)
		return rc;
	for (off = 0; off < len || (len == 0 && off == 0); off += FORK_SLOT) {
		chunk = len - off < FORK_SLOT ? len - off : FORK_SLOT;
		if (b->rank == root && chunk > 0)
			memcpy(f->slots, p + off, chunk);
		rc = fork_barrier(b);
		if (rc != IBC_OK)
			return rc;
		if (b->rank != root && chunk > 0)
			memcpy(p + off, f->slots, chunk);
		rc = fork_barrier(b);
		if (rc != IBC_OK)
			return rc;
		if (len == 0)
			break;
	}
	return IBC_OK;
}

static uint32_t key_hash(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h;
}

static int kv_lock(struct fork_boot *f)
{
	unsigned long n = 0;
	int expected;

	for (;;) {
		expected = 0;
		if (atomic_compare_exchange_weak_explicit(&f->reg->kv_lock, &expected, 1,
							  memory_order_acquire, memory_order_relaxed))
			return IBC_OK;
		if (atomic_load(&f->reg->aborted))
			return IBC_ERR_CLOSED;
		if (++n >= f->spin)
			sched_yield();
	}
}

static void kv_unlock(struct fork_boot *f)
{
	atomic_store_explicit(&f->reg->kv_lock, 0, memory_order_release);
}

/* the entry of key, or the free entry where it would go, or NULL (full) */
static struct kv_entry *kv_slot(struct fork_boot *f, const char *key)
{
	uint32_t i, h = key_hash(key) % FORK_KV_CAP;
	struct kv_entry *e;

	for (i = 0; i < FORK_KV_CAP; i++) {
		e = &f->kv[(h + i) % FORK_KV_CAP];
		if (!atomic_load_explicit(&e->used, memory_order_acquire) ||
		    strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

static int fork_put(struct ibc_boot *b, const char *key, const void *val, size_t len)
{
	struct fork_boot *f = b->priv;
	struct kv_entry *e;
	int rc;

	if (strlen(key) >= FORK_KEY_MAX || len > FORK_VAL_MAX) {
		ibc_error("boot fork: put '%.40s': key must be < %d bytes and value <= %d bytes (%zu given)",
			  key, FORK_KEY_MAX, FORK_VAL_MAX, len);
		return IBC_ERR_INVAL;
	}
	rc = kv_lock(f);
	if (rc != IBC_OK)
		return rc;
	e = kv_slot(f, key);
	if (e == NULL) {
		kv_unlock(f);
		ibc_error("boot fork: bulletin board full (%d entries)", FORK_KV_CAP);
		return IBC_ERR_INVAL;
	}
	if (len > 0)
		memcpy(e->val, val, len);
	e->len = (uint32_t)len;
	if (!atomic_load_explicit(&e->used, memory_order_relaxed)) {
		strcpy(e->key, key);
		f->reg->kv_count++;
		atomic_store_explicit(&e->used, 1, memory_order_release);
	}
	kv_unlock(f);
	return IBC_OK;
}

static int fork_fence(struct ibc_boot *b)
{
	return fork_barrier(b);
}

static int fork_get(struct ibc_boot *b, const char *key, void *val, size_t cap, size_t *len)
{
	struct fork_boot *f = b->priv;
	struct kv_entry *e;

	if (atomic_load(&f->reg->aborted))
		return IBC_ERR_CLOSED;
	if (strlen(key) >= FORK_KEY_MAX)
		return IBC_ERR_NOTFOUND;
	e = kv_slot(f, key);
	if (e == NULL || !atomic_load_explicit(&e->used, memory_order_acquire))
		return IBC_ERR_NOTFOUND;
	if (len != NULL)
		*len = e->len;
	if (e->len > cap) {
		ibc_error("boot fork: value of '%s' has %u bytes, buffer %zu", key, e->len, cap);
		return IBC_ERR_INVAL;
	}
	if (e->len > 0)
		memcpy(val, e->val, e->len);
	return IBC_OK;
}

static void fork_abort(struct ibc_boot *b, int code, const char *why)
{
	struct fork_boot *f = b->priv;
	int r;

	ibc_error("boot fork: rank %d aborts the job (code %d): %s", b->rank, code,
		  why ? why : "");
	abort_set(f, code, b->rank);
	if (b->rank == 0)
		for (r = 1; r < b->size; r++)
			if (!f->children[r].reaped)
				kill(f->children[r].pid, SIGTERM);
}

/* Rank 0 learns of a child that died (a crash, a kill, a failing exit) at
 * once, through SIGCHLD: the handler looks without reaping (WNOWAIT) and sets
 * the abort flag, so every wait of rank 0 ends, wherever it waits (the
 * harness's node sync, a transport, an algorithm), not only in this
 * bootstrap's own waits.  A child that exits 0 does so only at close. */
static struct fork_boot *sigchld_boot;
static struct sigaction sigchld_old;

static void on_sigchld(int sig)
{
	struct fork_boot *f = sigchld_boot;
	int saved = errno, r;

	(void)sig;
	for (r = 1; f != NULL && r < f->boot.size; r++) {
		siginfo_t si;

		if (f->children[r].reaped)
			continue;
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)f->children[r].pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == f->children[r].pid &&
		    (si.si_code != CLD_EXITED || si.si_status != 0))
			abort_set(f, IBC_ERR_CLOSED, r);
	}
	errno = saved;
}

static void sigchld_watch(struct fork_boot *f)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigchld_boot = f;
	if (sigaction(SIGCHLD, &sa, &sigchld_old) != 0) {
		sigchld_boot = NULL;
		ibc_warn("boot fork: sigaction(SIGCHLD): %s; a dead rank is noticed in the "
			 "bootstrap's waits only", strerror(errno));
	}
}

static void fork_free(struct fork_boot *f)
{
	if (sigchld_boot == f) {
		sigaction(SIGCHLD, &sigchld_old, NULL);
		sigchld_boot = NULL;
	}
	ibc_wait_abort_watch(NULL);
	munmap(f->reg, f->reg_len);
	free(f->children);
	free(f);
}

/* Rank 0: wait for every child; after an abort, give them FORK_GRACE_S and
 * then kill the rest. */
static int children_reap(struct fork_boot *f)
{
	int r, status, left, failed = 0, aborted = atomic_load(&f->reg->aborted);
	double deadline = ibc_timer_now_us() + FORK_GRACE_S * 1e6;
	char how[96];
	pid_t p;

	for (;;) {
		left = 0;
		for (r = 1; r < f->boot.size; r++) {
			if (f->children[r].reaped)
				continue;
			p = waitpid(f->children[r].pid, &status, aborted ? WNOHANG : 0);
			if (p == f->children[r].pid) {
				f->children[r].reaped = 1;
				f->children[r].status = status;
			} else if (p < 0 && errno != EINTR) {
				ibc_error("boot fork: waitpid for rank %d: %s", r, strerror(errno));
				f->children[r].reaped = 1;
				f->children[r].status = -1;
			} else {
				left++;
			}
		}
		if (left == 0)
			break;
		if (ibc_timer_now_us() > deadline) {
			for (r = 1; r < f->boot.size; r++)
				if (!f->children[r].reaped) {
					ibc_error("boot fork: rank %d did not end after the abort; killing it", r);
					kill(f->children[r].pid, SIGKILL);
				}
			aborted = 0; /* now wait blocking: SIGKILL cannot be ignored */
			deadline = 1e300;
		}
		if (aborted) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	for (r = 1; r < f->boot.size; r++) {
		status = f->children[r].status;
		if (status == -1) {
			failed++;
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		status_describe(status, how, sizeof(how));
		ibc_error("boot fork: rank %d (pid %d) %s", r, (int)f->children[r].pid, how);
		failed++;
	}
	if (failed > 0)
		return IBC_ERR_REMOTE;
	if (atomic_load(&f->reg->aborted))
		return f->reg->abort_code < 0 ? f->reg->abort_code : IBC_ERR_CLOSED;
	return IBC_OK;
}

static int fork_close(struct ibc_boot *b)
{
	struct fork_boot *f = b->priv;
	int rc;

	/* collective: nobody leaves while others may still use the region */
	(void)fork_barrier(b);
	if (b->rank != 0) {
		fork_free(f);
		return IBC_OK;
	}
	rc = children_reap(f);
	fork_free(f);
	return rc;
}

static const struct ibc_boot_ops fork_ops = {
	.name = "fork",
	.allgather = fork_allgather,
	.gather = fork_gather,
	.bcast = fork_bcast,
	.barrier = fork_barrier,
	.put = fork_put,
	.fence = fork_fence,
	.get = fork_get,
	.abort = fork_abort,
	.close = fork_close,
};

int ibc_boot_fork_open(int nprocs, struct ibc_boot **out)
{
	struct fork_boot *f;
	size_t hdr;
	pid_t parent = getpid(), pid;
	long ncpu;
	int r, rc;
	char tag[32];

	*out = NULL;
	if (nprocs < 1 || nprocs > FORK_MAX_PROCS) {
		ibc_error("boot fork: %d ranks asked; 1..%d supported", nprocs, FORK_MAX_PROCS);
		return IBC_ERR_INVAL;
	}
	(void)ibc_timer_init(); /* calibrate once, before fork */
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return IBC_ERR_NOMEM;
	f->children = calloc((size_t)nprocs, sizeof(*f->children));
	if (f->children == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_free_handle;
	}
	f->reg_len = region_len(nprocs);
	f->reg = mmap(NULL, f->reg_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->reg == MAP_FAILED) {
		ibc_error("boot fork: mmap of %zu bytes: %s", f->reg_len, strerror(errno));
		rc = IBC_ERR_SYS;
		goto err_free_children;
	}
	hdr = (sizeof(struct region) + CL - 1) / CL * CL;
	f->slots = (unsigned char *)f->reg + hdr;
	f->kv = (struct kv_entry *)(f->slots + (size_t)nprocs * FORK_SLOT);
	f->reg->nprocs = nprocs;
	/* every wait loop of this process ends when the job aborts (_Atomic int
	 * has int's size and alignment here) */
	ibc_wait_abort_watch((const int *)(const void *)&f->reg->aborted);
	f->boot.ops = &fork_ops;
	f->boot.size = nprocs;
	f->boot.local_size = nprocs;
	f->boot.node_id = 0;
	f->boot.num_nodes = 1;
	f->boot.priv = f;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	f->spin = ncpu > 0 && nprocs > ncpu ? FORK_SPIN_OVERSUB : FORK_SPIN;

	fflush(stdout);
	fflush(stderr);
	for (r = 1; r < nprocs; r++) {
		pid = fork();
		if (pid < 0) {
			ibc_error("boot fork: fork of rank %d: %s", r, strerror(errno));
			abort_set(f, IBC_ERR_SYS, 0);
			f->boot.size = r; /* reap the ones that exist */
			(void)children_reap(f);
			rc = IBC_ERR_SYS;
			goto err_unmap;
		}
		if (pid == 0) {
			free(f->children);
			f->children = NULL;
			f->boot.rank = r;
			f->boot.local_rank = r;
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
				/* rank 0 is already gone */
				abort_set(f, IBC_ERR_CLOSED, r);
				fork_free(f);
				return IBC_ERR_CLOSED;
			}
			snprintf(tag, sizeof(tag), "rank %d", r);
			ibc_log_tag_set(tag);
			*out = &f->boot;
			return IBC_OK;
		}
		f->children[r].pid = pid;
	}
	f->boot.rank = 0;
	f->boot.local_rank = 0;
	if (nprocs > 1) {
		ibc_log_tag_set("rank 0");
		sigchld_watch(f);
	}
	*out = &f->boot;
	return IBC_OK;

err_unmap:
	ibc_wait_abort_watch(NULL);
	munmap(f->reg, f->reg_len);
err_free_children:
	free(f->children);
err_free_handle:
	free(f);
	return rc;
}
