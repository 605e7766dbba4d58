/* --validate for barriers: nobody leaves barrier k before everybody entered it.
 * See barrier.h for the checks (shared counter and entry/exit times on one
 * host; remote entry counters read after every exit across hosts). */
#include "barrier/barrier.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "xport/xport.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define REMOTE_TIMEOUT_NS (30LL * 1000000000LL) /* one round of counter reads */

struct shared_counter {
	_Atomic uint64_t entered;
};

/* remote mode: this rank's entry count, modulo 256, in one byte that the
 * others read through an own transport instance (its completions never meet
 * the barrier's).  One byte because a read of it cannot tear, whatever copy
 * the device or kernel does; see ibc_barrier_check_entry_ok for why modulo 256
 * is enough. */
struct remote_check {
	struct ibc_xport *x;
	struct ibc_xport_mr *ctr_mr;  /* byte 0: barriers this rank entered, mod 256 */
	struct ibc_xport_mr *land_mr; /* size bytes: the values read */
	struct ibc_xport_wr *wrs;     /* one read per peer, built once */
	struct ibc_xport_sge *sges;
};

struct ibc_barrier_check {
	struct ibc_boot *boot;
	struct shared_counter *ctr;  /* shared mode */
	struct remote_check *rem;    /* remote mode */
	size_t max_iters;
	uint64_t k;          /* barriers entered by this rank */
	uint64_t violations; /* seen on this rank */
	int64_t *times;      /* [2 + 2 * max_iters]: count, violations, entries, exits */
};

static void remote_free(struct remote_check *m)
{
	if (!m)
		return;
	if (m->x) {
		if (m->ctr_mr)
			(void)ibc_xport_mr_dereg(m->x, m->ctr_mr);
		if (m->land_mr)
			(void)ibc_xport_mr_dereg(m->x, m->land_mr);
		(void)ibc_xport_close(m->x);
	}
	free(m->wrs);
	free(m->sges);
	free(m);
}

/* Collective: an own instance of x's transport, every pair connected, the
 * counters' descriptors exchanged; one 1-byte RDMA read per peer prepared.
 * A read, not an atomic: rxe executes a compare-and-swap whose compare fails
 * as read, compare, write back the old value, so a "never-matching CAS read"
 * loses the owner's concurrent store (measured: 3 lost stores in 2233 CAS
 * reads), and the counter then looks stuck one barrier behind. */
static int remote_open(struct ibc_boot *boot, struct ibc_xport *x, struct remote_check **out)
{
	struct ibc_xport_rdesc *peers;
	struct remote_check *m;
	int rc, r, n = 0;

	*out = NULL;
	if (!x) {
		ibc_error("barrier validate: ranks on %d hosts need a transport for the check",
			  boot->num_nodes);
		return IBC_ERR_UNSUPPORTED;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return IBC_ERR_NOMEM; /* peers block in the collective open: best effort */
	peers = calloc((size_t)boot->size, sizeof(*peers));
	m->wrs = calloc((size_t)boot->size, sizeof(*m->wrs));
	m->sges = calloc((size_t)boot->size, sizeof(*m->sges));
	rc = ibc_xport_open(boot, &x->params, &m->x);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(m->x, sizeof(uint64_t),
					IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_READ,
					&m->ctr_mr);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(m->x, (size_t)boot->size, IBC_XPORT_ACCESS_LOCAL_WRITE,
					&m->land_mr);
	if (rc == IBC_OK && (!peers || !m->wrs || !m->sges))
		rc = IBC_ERR_NOMEM;
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(m->x, &m->ctr_mr->rdesc, peers);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(m->x, NULL);
	if (rc) {
		ibc_error("barrier validate: setting up the remote counters: %s", ibc_status_str(rc));
		free(peers);
		remote_free(m);
		return rc;
	}
	for (r = 0; r < boot->size; r++) {
		if (r == boot->rank)
			continue;
		m->sges[n] = (struct ibc_xport_sge){
			.addr = (uint64_t)(uintptr_t)m->land_mr->addr + (uint64_t)r,
			.len = 1, .lkey = m->land_mr->lkey };
		m->wrs[n] = (struct ibc_xport_wr){
			.wr_id = (uint64_t)r, .opcode = IBC_XPORT_OP_READ,
			.flags = IBC_XPORT_WR_SIGNALED, .peer = r, .num_sge = 1, .sge = &m->sges[n],
			.remote_addr = peers[r].addr, .rkey = peers[r].rkey };
		n++;
	}
	free(peers);
	*out = m;
	return IBC_OK;
}

int ibc_barrier_check_open(struct ibc_boot *boot, struct ibc_xport *x,
			   enum ibc_barrier_check_mode mode, size_t max_iters,
			   struct ibc_barrier_check **out)
{
	struct ibc_barrier_check *c;
	void *map;
	int rc;

	*out = NULL;
	if (mode == IBC_BARRIER_CHECK_AUTO)
		mode = boot->num_nodes > 1 ? IBC_BARRIER_CHECK_REMOTE : IBC_BARRIER_CHECK_SHARED;
	if (mode == IBC_BARRIER_CHECK_SHARED && boot->num_nodes > 1) {
		ibc_error("barrier validate: ranks on %d hosts; the shared counter needs one host",
			  boot->num_nodes);
		return IBC_ERR_UNSUPPORTED;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return IBC_ERR_NOMEM;
	c->boot = boot;
	if (mode == IBC_BARRIER_CHECK_REMOTE)
		max_iters = 0; /* no common clock: the counters are the check */
	c->max_iters = max_iters;
	c->times = calloc(2 + 2 * max_iters, sizeof(*c->times));
	if (!c->times) {
		rc = IBC_ERR_NOMEM;
		goto err_free_c;
	}
	if (mode == IBC_BARRIER_CHECK_REMOTE) {
		rc = remote_open(boot, x, &c->rem);
	} else {
		rc = ibc_boot_shm_map(boot, 0, "bcheck", sizeof(struct shared_counter), 1, &map);
		c->ctr = map;
	}
	if (rc)
		goto err_free_times;
	*out = c;
	return IBC_OK;

err_free_times:
	free(c->times);
err_free_c:
	free(c);
	return rc;
}

void ibc_barrier_check_enter(struct ibc_barrier_check *c)
{
	if (c->rem) {
		/* before this rank's first barrier message of barrier k */
		atomic_store_explicit((_Atomic uint8_t *)c->rem->ctr_mr->addr, (uint8_t)(c->k + 1),
				      memory_order_release);
		return;
	}
	if (c->k < c->max_iters)
		c->times[2 + c->k] = ibc_timer_mono_ns();
	atomic_fetch_add(&c->ctr->entered, 1);
}

int ibc_barrier_check_entry_ok(uint8_t got, uint64_t k)
{
	return (uint8_t)(got - (uint8_t)(k + 1)) <= 1;
}

/* remote mode: read every peer's entry count; see ibc_barrier_check_entry_ok */
static int remote_exit(struct ibc_barrier_check *c)
{
	struct remote_check *m = c->rem;
	const volatile uint8_t *got = m->land_mr->addr;
	struct ibc_xport_wc wc;
	int n = c->boot->size - 1, posted = 0, i, rc, late = -1;

	rc = ibc_xport_post(m->x, m->wrs, n, &posted);
	for (i = 0; i < posted; i++) {
		int rc2 = ibc_xport_cq_wait(m->x, IBC_XPORT_CQ_SEND, REMOTE_TIMEOUT_NS, &wc);

		if (rc2 == IBC_OK && wc.status != IBC_OK) {
			ibc_error("barrier validate: reading rank %d's counter: %s", wc.peer,
				  wc.reason ? wc.reason : ibc_status_str(wc.status));
			rc2 = wc.status < 0 ? wc.status : IBC_ERR_REMOTE;
		}
		if (rc2) {
			if (rc == IBC_OK)
				rc = rc2;
			if (rc2 == IBC_ERR_TIMEOUT)
				break;
		}
	}
	if (rc) {
		ibc_error("barrier validate: rank %d: the counter reads after barrier %llu failed: %s",
			  c->boot->rank, (unsigned long long)c->k, ibc_status_str(rc));
		return rc;
	}
	for (i = 0; i < c->boot->size; i++)
		if (i != c->boot->rank && !ibc_barrier_check_entry_ok(got[i], c->k))
			late = i;
	if (late < 0)
		return IBC_OK;
	if (c->violations == 0)
		ibc_error("barrier validate: rank %d left barrier %llu, and rank %d's entry count "
			  "read %u (mod 256) where %u or %u was due: it had not entered barrier "
			  "%llu, or had already left barrier %llu", c->boot->rank,
			  (unsigned long long)c->k, late, (unsigned)got[late],
			  (unsigned)(uint8_t)(c->k + 1), (unsigned)(uint8_t)(c->k + 2),
			  (unsigned long long)c->k, (unsigned long long)c->k + 1);
	return IBC_ERR_VALIDATE;
}

int ibc_barrier_check_exit(struct ibc_barrier_check *c)
{
	uint64_t seen, want;
	int rc = IBC_OK;

	if (c->rem) {
		rc = remote_exit(c);
		if (rc)
			c->violations++; /* a failed read cannot vouch for this barrier */
		c->k++;
		return rc;
	}
	seen = atomic_load(&c->ctr->entered);
	want = (c->k + 1) * (uint64_t)c->boot->size;
	if (c->k < c->max_iters)
		c->times[2 + c->max_iters + c->k] = ibc_timer_mono_ns();
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
	if (c->ctr)
		munmap(c->ctr, sizeof(struct shared_counter));
	remote_free(c->rem); /* collective (transport close), like this function */
	free(c->times);
	free(c);
	return rc;
}
