/* Transport front end: parameter defaults, backend selection ("auto"), argument
 * checks common to every backend, the wait primitive and small name tables.
 * Backends live in xport_<name>.c and are reached only through their ops. */
#include "xport/xport.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct ibc_xport_ops *const backends[] = {
	&ibc_xport_shm_ops,
	&ibc_xport_verbs_ops,
};

void ibc_xport_params_init(struct ibc_xport_params *p)
{
	memset(p, 0, sizeof(*p));
	p->backend = "auto";
	p->device = NULL;
	p->port = 0;
	p->gid_index = -1;
	p->max_inline = 64;
	p->sq_depth = 256;
	p->rq_depth = 256;
	p->cq_depth = 4096;
	p->max_sge = IBC_XPORT_MAX_SGE;
	p->conn = IBC_XPORT_CONN_RC;
	p->wait = IBC_WAIT_SPIN;
	p->mcast_drop = 0.0;
	p->p2p_drop = 0.0;
	p->drop_seed = 1;
}

const char *ibc_xport_opcode_name(enum ibc_xport_opcode op)
{
	static const char *const names[IBC_XPORT_OP_COUNT] = {
		[IBC_XPORT_OP_WRITE] = "write",
		[IBC_XPORT_OP_WRITE_IMM] = "write_imm",
		[IBC_XPORT_OP_READ] = "read",
		[IBC_XPORT_OP_SEND] = "send",
		[IBC_XPORT_OP_SEND_IMM] = "send_imm",
		[IBC_XPORT_OP_FETCH_ADD] = "fetch_add",
		[IBC_XPORT_OP_CMP_SWAP] = "cmp_swap",
		[IBC_XPORT_OP_MCAST_SEND] = "mcast_send",
		[IBC_XPORT_OP_RECV] = "recv",
		[IBC_XPORT_OP_RECV_WRITE_IMM] = "recv_write_imm",
		[IBC_XPORT_OP_MCAST_RECV] = "mcast_recv",
	};
	if ((int)op < 0 || op >= IBC_XPORT_OP_COUNT || names[op] == NULL)
		return "unknown";
	return names[op];
}

uint32_t ibc_xport_mcast_id_from_name(const char *name)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		h ^= *c;
		h *= 16777619u;
	}
	return h;
}

uint64_t ibc_xport_drop_seed(const struct ibc_xport *x)
{
	uint64_t s = (x->params.drop_seed + 1) * 0x9E3779B97F4A7C15ull ^
		     ((uint64_t)(x->rank + 1) * 0xD1B54A32D192ED03ull);

	return s != 0 ? s : 1;
}

int ibc_xport_drop_draw(uint64_t *rng, double p)
{
	uint64_t v = *rng;

	if (p <= 0)
		return 0;
	v ^= v >> 12;
	v ^= v << 25;
	v ^= v >> 27;
	*rng = v;
	return (double)((v * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0) < p;
}

static char unsupported_why[256];

const char *ibc_xport_unsupported_reason(void)
{
	return unsupported_why;
}

void ibc_xport_unsupported_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(unsupported_why, sizeof(unsupported_why), fmt, ap);
	va_end(ap);
}

const struct ibc_xport_ops *ibc_xport_backend_find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i] != NULL && backends[i]->name != NULL &&
		    strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

const char *ibc_xport_auto_backend(void)
{
	const struct ibc_xport_ops *v = ibc_xport_backend_find("verbs");
	struct ibc_xport_params p;

	ibc_xport_params_init(&p);
	if (v != NULL && v->probe(&p) == IBC_OK)
		return "verbs";
	return "shm";
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	if (src == NULL) {
		dst[0] = '\0';
		return;
	}
	strncpy(dst, src, cap - 1);
	dst[cap - 1] = '\0';
}

int ibc_xport_open(struct ibc_boot *boot, const struct ibc_xport_params *p,
		   struct ibc_xport **out)
{
	struct ibc_xport_params def;
	const struct ibc_xport_ops *ops;
	const char *want;
	struct ibc_xport *x;
	int rc;

	*out = NULL;
	if (boot == NULL) {
		ibc_error("xport: open needs a bootstrap");
		return IBC_ERR_INVAL;
	}
	if (p == NULL) {
		ibc_xport_params_init(&def);
		p = &def;
	}
	want = p->backend != NULL ? p->backend : "auto";
	if (strcmp(want, "auto") == 0) {
		const struct ibc_xport_ops *v = ibc_xport_backend_find("verbs");
		if (v != NULL && v->probe(p) == IBC_OK) {
			ops = v;
			ibc_info("xport: auto selected verbs (an RDMA device has an active port)");
		} else {
			ops = &ibc_xport_shm_ops;
			ibc_info("xport: auto selected shm (no RDMA device with an active port)");
		}
	} else {
		ops = ibc_xport_backend_find(want);
		if (ops == NULL) {
			ibc_error("xport: unknown backend '%s' (shm, verbs, auto)", want);
			return IBC_ERR_INVAL;
		}
	}
	if (p->max_sge < 1 || p->max_sge > IBC_XPORT_MAX_SGE || p->mcast_drop < 0 ||
	    p->mcast_drop > 1 || p->p2p_drop < 0 || p->p2p_drop > 1) {
		ibc_error("xport: bad parameters (max_sge %u, drop probabilities %g/%g)",
			  p->max_sge, p->mcast_drop, p->p2p_drop);
		return IBC_ERR_INVAL;
	}

	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		ibc_error("xport: out of memory");
		return IBC_ERR_NOMEM;
	}
	x->ops = ops;
	x->boot = boot;
	x->rank = boot->rank;
	x->size = boot->size;
	x->params = *p;
	copy_str(x->backend_buf, sizeof(x->backend_buf), ops->name);
	x->params.backend = x->backend_buf;
	if (p->device != NULL) {
		copy_str(x->device_buf, sizeof(x->device_buf), p->device);
		x->params.device = x->device_buf;
	}
	x->wait = p->wait;
	rc = ops->open(x);
	if (rc != IBC_OK) {
		free(x);
		return rc;
	}
	*out = x;
	return IBC_OK;
}

int ibc_xport_close(struct ibc_xport *x)
{
	int rc;

	if (x == NULL)
		return IBC_OK;
	rc = x->ops->close(x);
	free(x);
	return rc;
}

int ibc_xport_connect(struct ibc_xport *x, const uint8_t *want)
{
	int rc = x->ops->connect(x, want);
	if (rc == IBC_OK)
		x->connected = 1;
	return rc;
}

int ibc_xport_mr_reg(struct ibc_xport *x, void *addr, size_t len, unsigned access,
		     struct ibc_xport_mr **out)
{
	*out = NULL;
	if (addr == NULL || len == 0 || (access & ~(unsigned)IBC_XPORT_ACCESS_ALL) != 0) {
		ibc_error("xport: mr_reg: bad arguments (addr %p, len %zu, access %#x)",
			  addr, len, access);
		return IBC_ERR_INVAL;
	}
	return x->ops->mr_reg(x, addr, len, access, out);
}

int ibc_xport_mr_alloc(struct ibc_xport *x, size_t len, unsigned access,
		       struct ibc_xport_mr **out)
{
	*out = NULL;
	if (len == 0 || (access & ~(unsigned)IBC_XPORT_ACCESS_ALL) != 0) {
		ibc_error("xport: mr_alloc: bad arguments (len %zu, access %#x)", len, access);
		return IBC_ERR_INVAL;
	}
	return x->ops->mr_alloc(x, len, access, out);
}

int ibc_xport_mr_dereg(struct ibc_xport *x, struct ibc_xport_mr *mr)
{
	if (mr == NULL)
		return IBC_OK;
	return x->ops->mr_dereg(x, mr);
}

int ibc_xport_rdesc_allgather(struct ibc_xport *x, const struct ibc_xport_rdesc *mine,
			      struct ibc_xport_rdesc *all)
{
	int rc = ibc_boot_allgather(x->boot, mine, all, sizeof(*mine));
	if (rc != IBC_OK)
		ibc_error("xport: allgather of remote descriptors failed: %s",
			  ibc_status_str(rc));
	return rc;
}

int ibc_xport_post(struct ibc_xport *x, const struct ibc_xport_wr *wrs, int n, int *posted)
{
	*posted = 0;
	if (n < 0 || (n > 0 && wrs == NULL)) {
		ibc_error("xport: post: bad list (%d work requests)", n);
		return IBC_ERR_INVAL;
	}
	if (n == 0)
		return IBC_OK;
	return x->ops->post(x, wrs, n, posted);
}

int ibc_xport_recv_post(struct ibc_xport *x, const struct ibc_xport_recv_wr *wrs, int n,
			int *posted)
{
	*posted = 0;
	if (n < 0 || (n > 0 && wrs == NULL)) {
		ibc_error("xport: recv_post: bad list (%d work requests)", n);
		return IBC_ERR_INVAL;
	}
	if (n == 0)
		return IBC_OK;
	return x->ops->recv_post(x, wrs, n, posted);
}

int ibc_xport_cq_poll(struct ibc_xport *x, int cq, int max, struct ibc_xport_wc *wc, int *n)
{
	*n = 0;
	if (max <= 0 || wc == NULL || (cq & IBC_XPORT_CQ_ANY) == 0) {
		ibc_error("xport: cq_poll: bad arguments (cq %d, max %d)", cq, max);
		return IBC_ERR_INVAL;
	}
	return x->ops->cq_poll(x, cq, max, wc, n);
}

int ibc_xport_progress(struct ibc_xport *x)
{
	int rc = x->ops->progress(x), i;

	if (rc != IBC_OK || x->nhooks == 0 || x->in_hook)
		return rc;
	x->in_hook = 1;
	for (i = 0; i < x->nhooks && rc == IBC_OK; i++)
		rc = x->hooks[i].fn(x->hooks[i].arg);
	x->in_hook = 0;
	return rc;
}

int ibc_xport_progress_hook_add(struct ibc_xport *x, int (*fn)(void *arg), void *arg)
{
	if (x->nhooks == IBC_XPORT_MAX_HOOKS) {
		ibc_error("xport: more than %d progress hooks", IBC_XPORT_MAX_HOOKS);
		return IBC_ERR_NOMEM;
	}
	x->hooks[x->nhooks].fn = fn;
	x->hooks[x->nhooks].arg = arg;
	x->nhooks++;
	return IBC_OK;
}

void ibc_xport_progress_hook_remove(struct ibc_xport *x, int (*fn)(void *arg), void *arg)
{
	int i;

	for (i = 0; i < x->nhooks; i++) {
		if (x->hooks[i].fn != fn || x->hooks[i].arg != arg)
			continue;
		x->hooks[i] = x->hooks[--x->nhooks];
		return;
	}
}

/* polls of a completion wait between its checks of the abort flag and the
 * clock (a clock read is ~0.7 us in a TCG guest on the HPET) */
#define CQ_CHECK_EVERY 128

int ibc_xport_cq_wait(struct ibc_xport *x, int cq, int64_t timeout_ns, struct ibc_xport_wc *wc)
{
	struct ibc_wait_deadline deadline = IBC_WAIT_DEADLINE(timeout_ns);
	unsigned long polls = 0;

	for (;;) {
		int n, rc = ibc_xport_cq_poll(x, cq, 1, wc, &n);
		if (rc != IBC_OK)
			return rc;
		if (n == 1)
			return IBC_OK;
		ibc_wait_relax(x->wait, &polls);
		if (polls % CQ_CHECK_EVERY == 0 && (rc = ibc_wait_check(&deadline)) != IBC_OK)
			return rc;
	}
}

static int wait_progress(void *x)
{
	return ibc_xport_progress(x);
}

int ibc_xport_wait_u64(struct ibc_xport *x, const uint64_t *addr, uint64_t target,
		       int64_t timeout_ns, uint64_t *seen)
{
	return ibc_wait_u64(addr, target, x->wait, timeout_ns, wait_progress, x, seen);
}

int ibc_xport_spin_u64(struct ibc_xport *x, const uint64_t *addr, uint64_t target,
		       int64_t spin_ns)
{
	return ibc_wait_u64(addr, target, IBC_WAIT_SPIN, spin_ns, wait_progress, x, NULL);
}

int ibc_xport_mcast_join(struct ibc_xport *x, const char *name, uint32_t id,
			 struct ibc_xport_mcast **out)
{
	*out = NULL;
	if (name != NULL && (name[0] == '\0' || strlen(name) >= IBC_XPORT_NAME_MAX)) {
		ibc_error("xport: mcast_join: bad group name");
		return IBC_ERR_INVAL;
	}
	return x->ops->mcast_join(x, name, id, out);
}

int ibc_xport_mcast_join_new(struct ibc_xport *x, uint32_t salt, int member,
			     struct ibc_xport_mcast **out)
{
	uint32_t gid = 0;
	int rc;

	*out = NULL;
	if (x->rank == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		gid = (uint32_t)((uint64_t)getpid() * 2654435761u ^ (uint64_t)ts.tv_nsec ^
				 ((uint64_t)salt << 24));
		gid |= 1; /* never 0 */
	}
	rc = ibc_boot_bcast(x->boot, &gid, sizeof(gid), 0);
	if (rc != IBC_OK) {
		ibc_error("xport: sharing a multicast group id: %s", ibc_status_str(rc));
		return rc;
	}
	if (!member)
		return IBC_OK;
	rc = ibc_xport_mcast_join(x, NULL, gid, out);
	if (rc != IBC_OK)
		ibc_error("xport: joining multicast group %#x: %s", gid, ibc_status_str(rc));
	return rc;
}

int ibc_xport_mcast_leave(struct ibc_xport *x, struct ibc_xport_mcast *g)
{
	if (g == NULL)
		return IBC_OK;
	return x->ops->mcast_leave(x, g);
}

int ibc_xport_stats_get(struct ibc_xport *x, struct ibc_xport_stats *out)
{
	memset(out, 0, sizeof(*out));
	return x->ops->stats_get(x, out);
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

/* one ping or pong: write seq into the peer's word, signaled; reap it */
static int pp_send(struct ibc_xport *x, int peer, struct ibc_xport_mr *mr, uint64_t *src,
		   const struct ibc_xport_rdesc *rd, uint64_t seq)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)src, 8, mr->lkey };
	unsigned flags = IBC_XPORT_WR_SIGNALED | (x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0);
	struct ibc_xport_wc wc;
	int rc;

	*src = seq;
	rc = ibc_xport_write(x, peer, &s, 1, rd->addr, rd->rkey, flags, seq);
	if (rc != IBC_OK)
		return rc;
	rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_SEND, 10LL * 1000000000, &wc);
	if (rc != IBC_OK) {
		ibc_error("xport: ping-pong: no write completion: %s", ibc_status_str(rc));
		return rc;
	}
	if (wc.status != IBC_OK) {
		ibc_error("xport: ping-pong: write failed: %s", wc.reason);
		return IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

int ibc_xport_pingpong(struct ibc_xport *x, int a, int b, long rounds, double *oneway_us)
{
	struct ibc_xport_mr *mr = NULL;
	struct ibc_xport_rdesc *rd = NULL;
	double *rtt = NULL;
	uint64_t *word, *src;
	int role = x->rank == a ? 0 : x->rank == b ? 1 : -1;
	int rc, rc2;

	*oneway_us = -1;
	if (a < 0 || b < 0 || a >= x->size || b >= x->size || a == b || rounds < 1) {
		ibc_error("xport: ping-pong: bad ranks %d, %d or rounds %ld", a, b, rounds);
		return IBC_ERR_INVAL;
	}
	rd = calloc((size_t)x->size, sizeof(*rd));
	rtt = role == 0 ? calloc((size_t)rounds, sizeof(*rtt)) : NULL;
	if (rd == NULL || (role == 0 && rtt == NULL)) {
		ibc_error("xport: ping-pong: out of memory");
		rc = IBC_ERR_NOMEM;
		goto err_free;
	}
	rc = ibc_xport_mr_alloc(x, 4096, IBC_XPORT_ACCESS_ALL, &mr);
	rc2 = ibc_boot_allgather(x->boot, mr != NULL ? &mr->rdesc : rd, rd, sizeof(*rd));
	if (rc == IBC_OK && rc2 != IBC_OK)
		rc = rc2;
	if (rc != IBC_OK)
		goto err_dereg;
	word = mr->addr;
	src = (uint64_t *)(void *)((char *)mr->addr + 64);
	*word = 0;
	rc = ibc_boot_barrier(x->boot);
	for (long i = 1; rc == IBC_OK && role >= 0 && i <= rounds; i++) {
		int64_t t0 = ibc_timer_mono_ns();
		if (role == 0) {
			rc = pp_send(x, b, mr, src, &rd[b], (uint64_t)i);
			if (rc == IBC_OK)
				rc = ibc_xport_wait_u64(x, word, (uint64_t)i, 10LL * 1000000000, NULL);
			rtt[i - 1] = (double)(ibc_timer_mono_ns() - t0) / 1000.0;
		} else {
			rc = ibc_xport_wait_u64(x, word, (uint64_t)i, 10LL * 1000000000, NULL);
			if (rc == IBC_OK)
				rc = pp_send(x, a, mr, src, &rd[a], (uint64_t)i);
		}
		if (rc == IBC_ERR_TIMEOUT)
			ibc_error("xport: ping-pong: round %ld timed out", i);
	}
	rc2 = ibc_boot_barrier(x->boot);
	if (rc == IBC_OK)
		rc = rc2;
	if (rc == IBC_OK && role == 0) {
		qsort(rtt, (size_t)rounds, sizeof(*rtt), cmp_double);
		*oneway_us = (rounds % 2 ? rtt[rounds / 2]
					 : (rtt[rounds / 2 - 1] + rtt[rounds / 2]) / 2) / 2;
	}
err_dereg:
	if (mr != NULL)
		ibc_xport_mr_dereg(x, mr);
err_free:
	free(rd);
	free(rtt);
	return rc;
}
