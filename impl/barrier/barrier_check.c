/* --validate for barriers: nobody leaves barrier k before everybody entered it.
 * See barrier.h for the two checks (shared counter; entry/exit times). */
#include "barrier/barrier.h"

#include "boot/boot.h"
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

struct shared_counter {
	_Atomic uint64_t entered;
};

struct ibc_barrier_check {
	struct ibc_boot *boot;
	struct shared_counter *ctr;
	size_t max_iters;
	uint64_t k;          /* barriers entered by this rank */
	uint64_t violations; /* seen by the counter on this rank */
	int64_t *times;      /* [2 + 2 * max_iters]: count, violations, entries, exits */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ibc_barrier_check_open(struct ibc_boot *boot, size_t max_iters,
			   struct ibc_barrier_check **out)
{
	static unsigned seq;
	struct ibc_barrier_check *c;
	char name[64] = "";
	int fd = -1, rc = IBC_OK, rc2;

	*out = NULL;
	if (boot->num_nodes > 1) {
		ibc_error("barrier validate: ranks on %d hosts; the check needs one host "
			  "(shared counter, one clock)", boot->num_nodes);
		return IBC_ERR_UNSUPPORTED;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return IBC_ERR_NOMEM;
	c->boot = boot;
	c->max_iters = max_iters;
	c->times = calloc(2 + 2 * max_iters, sizeof(*c->times));
	if (!c->times) {
		rc = IBC_ERR_NOMEM;
		goto err_free_c;
	}
	if (boot->rank == 0) {
		snprintf(name, sizeof(name), "/ibc-bcheck-%d-%u", (int)getpid(), seq++);
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, sizeof(struct shared_counter)) != 0) {
			ibc_error("barrier validate: shared counter %s: %s", name, strerror(errno));
			name[0] = '\0'; /* tells the others */
			rc = IBC_ERR_SYS;
		}
		if (fd >= 0) {
			close(fd);
			fd = -1;
		}
	}
	rc2 = ibc_boot_bcast(boot, name, sizeof(name), 0);
	if (rc2 || !name[0]) {
		rc = rc2 ? rc2 : IBC_ERR_SYS;
		goto err_unlink;
	}
	fd = shm_open(name, O_RDWR, 0600);
	if (fd < 0) {
		ibc_error("barrier validate: opening %s: %s", name, strerror(errno));
		rc = IBC_ERR_SYS;
	} else {
		void *p = mmap(NULL, sizeof(struct shared_counter), PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);

		close(fd);
		if (p == MAP_FAILED) {
			ibc_error("barrier validate: mapping %s: %s", name, strerror(errno));
			rc = IBC_ERR_SYS;
		} else {
			c->ctr = p;
		}
	}
	/* everyone has it mapped (or failed) before the name goes away */
	rc2 = ibc_boot_barrier(boot);
	if (!rc)
		rc = rc2;
err_unlink:
	if (boot->rank == 0 && name[0])
		shm_unlink(name);
	if (rc)
		goto err_unmap;
	*out = c;
	return IBC_OK;

err_unmap:
	if (c->ctr)
		munmap(c->ctr, sizeof(struct shared_counter));
	free(c->times);
err_free_c:
	free(c);
	return rc;
}

void ibc_barrier_check_enter(struct ibc_barrier_check *c)
{
	if (c->k < c->max_iters)
		c->times[2 + c->k] = now_ns();
	atomic_fetch_add(&c->ctr->entered, 1);
}

int ibc_barrier_check_exit(struct ibc_barrier_check *c)
{
	uint64_t seen = atomic_load(&c->ctr->entered);
	uint64_t want = (c->k + 1) * (uint64_t)c->boot->size;
	int rc = IBC_OK;

	if (c->k < c->max_iters)
		c->times[2 + c->max_iters + c->k] = now_ns();
	if (seen < want) {
		if (c->violations == 0)
			ibc_error("barrier validate: rank %d left barrier %llu when only %llu of %llu "
				  "entries had happened", c->boot->rank, (unsigned long long)c->k,
				  (unsigned long long)seen, (unsigned long long)want);
		c->violations++;
		rc = IBC_ERR_VALIDATE;
	}
	c->k++;
	return rc;
}

int ibc_barrier_check_close(struct ibc_barrier_check *c, uint64_t *violations)
{
	size_t m = c->max_iters, per = 2 + 2 * m, k, n;
	int64_t *all = NULL, verdict[2] = { 0, 0 };
	int r, rc, size = c->boot->size;

	c->times[0] = (int64_t)c->k;
	c->times[1] = (int64_t)c->violations;
	if (c->boot->rank == 0) {
		all = malloc((size_t)size * per * sizeof(*all));
		if (!all) {
			ibc_error("barrier validate: no memory for %zu entry/exit times",
				  (size_t)size * per);
			verdict[0] = IBC_ERR_NOMEM;
		}
	}
	/* everyone learns whether rank 0 can take the times */
	rc = ibc_boot_bcast(c->boot, verdict, sizeof(verdict), 0);
	if (rc == IBC_OK && verdict[0] != IBC_OK)
		rc = (int)verdict[0];
	if (rc)
		goto out_free;
	rc = ibc_boot_gather(c->boot, c->times, all, per * sizeof(*all), 0);
	if (rc) {
		ibc_error("barrier validate: gathering entry/exit times: %s", ibc_status_str(rc));
		goto out_free;
	}
	if (c->boot->rank == 0 && all) {
		uint64_t count = (uint64_t)all[0], viol = 0, logged = 0;

		for (r = 0; r < size; r++) {
			viol += (uint64_t)all[(size_t)r * per + 1];
			if ((uint64_t)all[(size_t)r * per] != count) {
				ibc_error("barrier validate: rank %d ran %lld barriers, rank 0 %llu", r,
					  (long long)all[(size_t)r * per], (unsigned long long)count);
				viol++;
			}
		}
		n = count < m ? (size_t)count : m;
		for (k = 0; k < n; k++) {
			int64_t last_in = INT64_MIN, first_out = INT64_MAX;
			int who_in = 0, who_out = 0;

			for (r = 0; r < size; r++) {
				int64_t tin = all[(size_t)r * per + 2 + k];
				int64_t tout = all[(size_t)r * per + 2 + m + k];

				if (tin > last_in) {
					last_in = tin;
					who_in = r;
				}
				if (tout < first_out) {
					first_out = tout;
					who_out = r;
				}
			}
			if (first_out < last_in) {
				if (logged++ == 0)
					ibc_error("barrier validate: barrier %zu: rank %d left %.3f us "
						  "before rank %d entered", k, who_out,
						  (double)(last_in - first_out) / 1e3, who_in);
				viol++;
			}
		}
		verdict[1] = (int64_t)viol;
	}
	rc = ibc_boot_bcast(c->boot, verdict, sizeof(verdict), 0);
	if (rc == IBC_OK)
		rc = (int)verdict[0];
	if (violations)
		*violations = (uint64_t)verdict[1];
	if (rc == IBC_OK && verdict[1] > 0)
		rc = IBC_ERR_VALIDATE;
out_free:
	free(all);
	munmap(c->ctr, sizeof(struct shared_counter));
	free(c->times);
	free(c);
	return rc;
}
