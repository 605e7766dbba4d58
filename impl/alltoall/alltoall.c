/* The all-to-all table, instances, completion routing and waiting, and the
 * test data (alltoall.h). */
#include "alltoall/alltoall_impl.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"
#include "regcache/regcache.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const struct ibc_alltoall_alg *const table[] = {
	&ibc_alltoall_alg_hrwg,     &ibc_alltoall_alg_hrwg_multi, &ibc_alltoall_alg_de,
	&ibc_alltoall_alg_hypercube, &ibc_alltoall_alg_bruck,      &ibc_alltoall_alg_pairwise,
	&ibc_alltoall_alg_direct,
};
#define NALGS (sizeof(table) / sizeof(table[0]))

size_t ibc_alltoall_alg_count(void)
{
	return NALGS;
}

const struct ibc_alltoall_alg *ibc_alltoall_alg_get(size_t i)
{
	return i < NALGS ? table[i] : NULL;
}

const struct ibc_alltoall_alg *ibc_alltoall_alg_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < NALGS; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

int ibc_alltoall_alg_usable(const struct ibc_alltoall_alg *alg, const struct ibc_xport *x, int n,
			    char *why, size_t cap)
{
	char dummy[8];

	if (why == NULL) {
		why = dummy;
		cap = sizeof(dummy);
	}
	if ((alg->needs & IBC_ALLTOALL_NEEDS_POW2) && (n < 1 || (n & (n - 1)) != 0)) {
		snprintf(why, cap, "%s needs a power of two ranks (N = %d)", alg->name, n);
		return IBC_ERR_UNSUPPORTED;
	}
	if ((alg->needs & IBC_ALLTOALL_NEEDS_USER_MEM) && !x->caps.user_mem) {
		snprintf(why, cap, "%s writes zero copy into user memory, which %s cannot reach",
			 alg->name, x->caps.backend);
		return IBC_ERR_UNSUPPORTED;
	}
	if ((alg->needs & IBC_ALLTOALL_NEEDS_TWO_SIDED) && x->caps.max_recv_wr == 0) {
		snprintf(why, cap, "%s needs two-sided messages", alg->name);
		return IBC_ERR_UNSUPPORTED;
	}
	return IBC_OK;
}

void ibc_alltoall_list_print(FILE *out)
{
	size_t i;

	for (i = 0; i < NALGS; i++)
		fprintf(out, "    %-11s %s\n", table[i]->name, table[i]->desc);
}

void ibc_alltoall_params_init(struct ibc_alltoall_params *p)
{
	memset(p, 0, sizeof(*p));
	p->max_bytes = 4096;
	p->eager_max = 8192;
	p->deadline_s = 60;
}

struct ibc_family_kind a2a_family_kind = { "alltoall", 0 };

/* A completion of one of a's WRs (the router's handler). */
static int a2a_wc(void *owner, const struct ibc_xport_wc *wc, unsigned kind, uint32_t index)
{
	struct ibc_alltoall *o = owner;

	(void)kind;
	(void)index;
	if (wc->status != IBC_OK)
		a2a_wc_failed(o, wc);
	else if (o->outstanding > 0)
		o->outstanding--;
	return IBC_OK;
}

int ibc_alltoall_create(struct ibc_xport *x, const char *name,
			const struct ibc_alltoall_params *p, struct ibc_alltoall **out)
{
	const struct ibc_alltoall_alg *alg = ibc_alltoall_alg_find(name);
	struct ibc_alltoall *a;
	char why[160];
	int rc;

	*out = NULL;
	if (alg == NULL) {
		ibc_error("alltoall: no algorithm \"%s\"", name ? name : "(null)");
		return IBC_ERR_NOTFOUND;
	}
	if (ibc_alltoall_alg_usable(alg, x, x->size, why, sizeof(why)) != IBC_OK) {
		ibc_error("alltoall: %s", why);
		return IBC_ERR_UNSUPPORTED;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return IBC_ERR_NOMEM;
	a->alg = alg;
	a->x = x;
	a->rank = x->rank;
	a->size = x->size;
	if (p != NULL)
		a->params = *p;
	else
		ibc_alltoall_params_init(&a->params);
	if (a->params.deadline_s <= 0 || a->params.eager_max == 0) {
		ibc_error("alltoall %s: deadline and eager limit must be > 0", name);
		free(a);
		return IBC_ERR_INVAL;
	}
	if (a->params.max_bytes == 0)
		a->params.max_bytes = 1;
	a->deadline_ns = (int64_t)(a->params.deadline_s * 1e9);
	a->jitter_state = a->params.jitter_seed * 2654435761u + (unsigned)a->rank * 40503u + 1;
	rc = ibc_family_add(&a->fm, &a2a_family_kind, a2a_wc, a);
	if (rc == IBC_OK && a->params.rcache == NULL) {
		rc = ibc_regcache_open(x, 0, &a->rc);
		a->rc_own = 1;
	} else {
		a->rc = a->params.rcache;
	}
	if (rc) {
		ibc_family_remove(&a->fm);
		free(a);
		return rc;
	}
	*out = a;
	return IBC_OK;
}

int ibc_alltoall_setup(struct ibc_alltoall *a)
{
	int rc;

	if (a->ready)
		return IBC_OK;
	rc = a->alg->setup ? a->alg->setup(a) : IBC_OK;
	if (rc == IBC_OK)
		a->ready = 1;
	else if (a->failed == IBC_OK)
		a->failed = rc;
	return rc;
}

int ibc_alltoall_run(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m)
{
	int rc;

	if (a->failed)
		return a->failed;
	if (!a->ready && (rc = ibc_alltoall_setup(a)) != IBC_OK)
		return rc;
	if (m == 0)
		return IBC_OK;
	a->seq++;
	rc = a->alg->run(a, sbuf, rbuf, m);
	if (rc == IBC_OK)
		a->cnt.calls++;
	else if (a->failed == IBC_OK)
		a->failed = rc;
	return rc;
}

int ibc_alltoall_destroy(struct ibc_alltoall *a)
{
	int rc = IBC_OK;

	if (a == NULL)
		return IBC_OK;
	/* nothing may be in flight from this instance when its memory goes */
	if (a->failed == IBC_OK && a->ready)
		rc = a2a_drain(a);
	if (a->alg->teardown)
		a->alg->teardown(a);
	if (a->rc_own)
		(void)ibc_regcache_close(a->rc);
	ibc_family_remove(&a->fm);
	free(a);
	return rc;
}

void ibc_alltoall_counters_get(const struct ibc_alltoall *a, struct ibc_alltoall_counters *out)
{
	*out = a->cnt;
}

const struct ibc_alltoall_alg *ibc_alltoall_alg_of(const struct ibc_alltoall *a)
{
	return a->alg;
}

/* ------------------------------------------------ completion routing -- */

void a2a_wc_failed(struct ibc_alltoall *a, const struct ibc_xport_wc *wc)
{
	if (a->failed)
		return;
	ibc_error("alltoall %s rank %d: %s to rank %d failed: %s", a->alg->name, a->rank,
		  ibc_xport_opcode_name(wc->opcode), wc->peer, wc->reason ? wc->reason : "?");
	a->failed = wc->status < 0 ? wc->status : IBC_ERR_REMOTE;
}

int a2a_wait_u64(struct ibc_alltoall *a, const volatile uint64_t *addr, uint64_t target,
		 const char *what, int peer)
{
	struct a2a_waiter w = A2A_WAITER(a);
	int rc;

	while (atomic_load_explicit((const volatile _Atomic uint64_t *)addr,
				    memory_order_acquire) < target)
		if ((rc = a2a_tick(a, &w, what, peer)) != IBC_OK)
			return rc;
	return IBC_OK;
}

int a2a_drain(struct ibc_alltoall *a)
{
	struct a2a_waiter w = A2A_WAITER(a);
	int rc = a2a_service(a);

	while (rc == IBC_OK && a->outstanding > 0) {
		rc = a2a_tick(a, &w, "send completion", -1);
		if (rc == IBC_OK)
			rc = a2a_service(a);
	}
	return rc;
}

void a2a_jitter(struct ibc_alltoall *a)
{
	unsigned r;

	if (a->params.jitter_us <= 0)
		return;
	r = rand_r(&a->jitter_state);
	if (r % 4 == 0)
		ibc_timer_spin_us(a->params.jitter_us * (double)(r % 1000) / 1000.0);
}

int a2a_reg(struct ibc_alltoall *a, void *addr, size_t len, unsigned access,
	    struct ibc_xport_mr **mr)
{
	int hit = 0, rc = ibc_regcache_get(a->rc, addr, len, access, mr, &hit);

	if (rc == IBC_OK) {
		if (hit)
			a->cnt.reg_hits++;
		else
			a->cnt.reg_misses++;
	} else {
		ibc_error("alltoall %s rank %d: registering %zu bytes: %s", a->alg->name, a->rank,
			  len, ibc_status_str(rc));
	}
	return rc;
}

void a2a_unreg(struct ibc_alltoall *a, struct ibc_xport_mr *mr)
{
	ibc_regcache_put(a->rc, mr);
}

void a2a_copy(struct ibc_alltoall *a, void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	a->cnt.copy_bytes += n;
}

void a2a_self_copy(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m)
{
	a2a_copy(a, (char *)rbuf + (size_t)a->rank * m, (const char *)sbuf + (size_t)a->rank * m, m);
}

int a2a_rounds_copies(struct ibc_pattern_round *r, int m, int cap, long first, long last,
		      long last_peer)
{
	if (r == NULL || m < 1 || m > cap)
		return m;
	r[0].copies += first;
	r[m - 1].copies += last;
	r[m - 1].copies_peer += last_peer;
	return m;
}

int a2a_sched_build(struct a2a_sched *sc, enum ibc_pattern_comb kind, int n, int rank)
{
	int s, k;

	memset(sc, 0, sizeof(*sc));
	sc->kind = kind;
	sc->n = n;
	sc->nsteps = ibc_pattern_comb_nsteps(kind, n);
	if (sc->nsteps < 0)
		return IBC_ERR_INVAL;
	sc->step = calloc((size_t)sc->nsteps + 1, sizeof(*sc->step));
	sc->moving = calloc((size_t)(sc->nsteps + 1) * (size_t)n, sizeof(int));
	sc->nmoving = calloc((size_t)sc->nsteps + 1, sizeof(int));
	sc->in_blk = calloc((size_t)n, sizeof(int));
	sc->out_blk = calloc((size_t)n, sizeof(int));
	if (!sc->step || !sc->moving || !sc->nmoving || !sc->in_blk || !sc->out_blk) {
		a2a_sched_free(sc);
		return IBC_ERR_NOMEM;
	}
	for (k = 0; k < n; k++) {
		sc->in_blk[k] = ibc_pattern_comb_in_block(kind, n, rank, k);
		sc->out_blk[k] = ibc_pattern_comb_out_block(kind, n, rank, k);
	}
	for (s = 0; s < sc->nsteps; s++) {
		ibc_pattern_comb_step_get(kind, n, rank, s, &sc->step[s]);
		for (k = 0; k < n; k++)
			if (ibc_pattern_comb_moves(kind, n, rank, s, k) == 1)
				sc->moving[(size_t)s * (size_t)n + (size_t)sc->nmoving[s]++] = k;
	}
	return IBC_OK;
}

void a2a_sched_free(struct a2a_sched *sc)
{
	free(sc->step);
	free(sc->moving);
	free(sc->nmoving);
	free(sc->in_blk);
	free(sc->out_blk);
	memset(sc, 0, sizeof(*sc));
}

/* ---------------------------------------------------------- test data -- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t block_seed(int src, int dst, uint64_t it)
{
	return mix64(((uint64_t)(uint32_t)src << 40) ^ ((uint64_t)(uint32_t)dst << 16) ^
		     mix64(it));
}

/* byte o of a block: word o/8 of a keyed stream */
static void block_gen(unsigned char *out, size_t m, uint64_t seed)
{
	size_t o, w;

	for (o = 0, w = 0; o < m; w++) {
		uint64_t v = mix64(seed + w);
		size_t k;

		for (k = 0; k < 8 && o < m; k++, o++)
			out[o] = (unsigned char)(v >> (8 * k));
	}
}

void ibc_alltoall_fill(void *sbuf, int rank, int n, size_t m, uint64_t it)
{
	int j;

	for (j = 0; j < n; j++)
		block_gen((unsigned char *)sbuf + (size_t)j * m, m, block_seed(rank, j, it));
}

size_t ibc_alltoall_check(const void *rbuf, int rank, int n, size_t m, uint64_t it,
			  int *bad_src, size_t *bad_off)
{
	unsigned char want[4096];
	size_t bad = 0;
	int i;

	for (i = 0; i < n; i++) {
		const unsigned char *got = (const unsigned char *)rbuf + (size_t)i * m;
		uint64_t seed = block_seed(i, rank, it);
		size_t o, w0;

		/* in chunks of 4096 bytes = 512 words of the stream */
		for (o = 0, w0 = 0; o < m; o += sizeof(want), w0 += sizeof(want) / 8) {
			size_t len = m - o < sizeof(want) ? m - o : sizeof(want), k;

			block_gen(want, len, seed + w0);
			if (memcmp(want, got + o, len) == 0)
				continue;
			for (k = 0; k < len; k++)
				if (want[k] != got[o + k]) {
					if (bad == 0) {
						if (bad_src)
							*bad_src = i;
						if (bad_off)
							*bad_off = o + k;
					}
					bad++;
				}
		}
	}
	return bad;
}

int ibc_alltoall_alg_rounds(const char *name, int n, struct ibc_pattern_round *r, int cap)
{
	const struct ibc_alltoall_alg *alg = ibc_alltoall_alg_find(name);

	if (alg == NULL || alg->rounds == NULL)
		return IBC_ERR_NOTFOUND;
	if (n < 1 || n > IBC_PATTERN_MAX_N ||
	    ((alg->needs & IBC_ALLTOALL_NEEDS_POW2) && !ibc_pattern_pow2_is(n)))
		return IBC_ERR_INVAL;
	return alg->rounds(n, r, cap);
}
