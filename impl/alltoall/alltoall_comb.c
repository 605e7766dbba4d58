/* The combining all-to-alls over two-sided messages, with copies (the
 * "current implementation" of Sur et al. for small messages, eq. 1): the
 * blocks start in a work buffer in slot order; each step packs the slots
 * that move into one message, exchanges it with a2a_sendrecv and unpacks
 * the partner's into the same slots; the schedule is impl/pattern's
 * (hypercube for `hypercube`, Bruck for `bruck`). */
#include "alltoall/alltoall_impl.h"

#include "core/status.h"
#include "pattern/pattern.h"
#include "regcache/regcache.h"

#include <stdlib.h>

struct comb_priv {
	struct a2a_sched sc;
	unsigned char *work, *pack, *unpack;
	size_t cap;      /* bytes of each buffer */
};

static int comb_setup(struct ibc_alltoall *a)
{
	struct comb_priv *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL)
		return IBC_ERR_NOMEM;
	a->priv = c;
	rc = a2a_sched_build(&c->sc, *(const enum ibc_pattern_comb *)a->alg->arg, a->size, a->rank);
	return rc ? rc : a2a_p2p_setup(a);
}

static void bufs_free(struct ibc_alltoall *a, struct comb_priv *c)
{
	/* the rendezvous registered them through the cache */
	if (c->pack)
		(void)ibc_regcache_invalidate(a->rc, c->pack, c->cap);
	if (c->unpack)
		(void)ibc_regcache_invalidate(a->rc, c->unpack, c->cap);
	free(c->work);
	free(c->pack);
	free(c->unpack);
	c->work = c->pack = c->unpack = NULL;
	c->cap = 0;
}

static int bufs_fit(struct ibc_alltoall *a, struct comb_priv *c, size_t len)
{
	if (len <= c->cap)
		return IBC_OK;
	bufs_free(a, c);
	if (posix_memalign((void **)&c->work, 4096, len) || posix_memalign((void **)&c->pack, 4096, len) ||
	    posix_memalign((void **)&c->unpack, 4096, len)) {
		bufs_free(a, c);
		return IBC_ERR_NOMEM;
	}
	c->cap = len;
	return IBC_OK;
}

static int comb_run(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m)
{
	struct comb_priv *c = a->priv;
	const struct a2a_sched *sc = &c->sc;
	int n = a->size, s, k, j, rc;
	const unsigned char *in = sbuf;
	unsigned char *out = rbuf;

	rc = bufs_fit(a, c, (size_t)n * m);
	for (k = 0; rc == IBC_OK && k < n; k++)
		a2a_copy(a, c->work + (size_t)k * m, in + (size_t)sc->in_blk[k] * m, m);
	for (s = 0; rc == IBC_OK && s < sc->nsteps; s++) {
		const int *mv = sc->moving + (size_t)s * (size_t)n;
		size_t bytes = (size_t)sc->nmoving[s] * m;

		a2a_jitter(a);
		for (j = 0; j < sc->nmoving[s]; j++)
			a2a_copy(a, c->pack + (size_t)j * m, c->work + (size_t)mv[j] * m, m);
		rc = a2a_sendrecv(a, sc->step[s].send_to, c->pack, bytes, sc->step[s].recv_from,
				  c->unpack, bytes, 0);
		for (j = 0; rc == IBC_OK && j < sc->nmoving[s]; j++)
			a2a_copy(a, c->work + (size_t)mv[j] * m, c->unpack + (size_t)j * m, m);
	}
	for (k = 0; rc == IBC_OK && k < n; k++)
		a2a_copy(a, out + (size_t)sc->out_blk[k] * m, c->work + (size_t)k * m, m);
	return rc ? rc : a2a_drain(a);
}

static void comb_teardown(struct ibc_alltoall *a)
{
	struct comb_priv *c = a->priv;

	a2a_p2p_teardown(a);
	if (c == NULL)
		return;
	bufs_free(a, c);
	a2a_sched_free(&c->sc);
	free(c);
	a->priv = NULL;
}

static const enum ibc_pattern_comb kind_hcube = IBC_PATTERN_COMB_HCUBE;
static const enum ibc_pattern_comb kind_bruck = IBC_PATTERN_COMB_BRUCK;

/* copies: the n blocks into the work buffer and out of it; per step the
 * moving blocks packed and unpacked (the unpack buffer holds what the
 * message layer copied out: this rank's lines), the message eager */
static int comb_rounds(enum ibc_pattern_comb kind, int n, struct ibc_pattern_round *r, int cap)
{
	int m = ibc_pattern_comb_rounds(kind, n, IBC_PATTERN_ROUND_SEND, r, cap), k;

	for (k = 0; r != NULL && m <= cap && k < m; k++) {
		r[k].copies = 2 * r[k].blocks;
		r[k].eager = 1;
	}
	return a2a_rounds_copies(r, m, cap, n, n, 0);
}

static int hcube_rounds(int n, struct ibc_pattern_round *r, int cap)
{
	return comb_rounds(IBC_PATTERN_COMB_HCUBE, n, r, cap);
}

static int bruck_rounds(int n, struct ibc_pattern_round *r, int cap)
{
	return comb_rounds(IBC_PATTERN_COMB_BRUCK, n, r, cap);
}

const struct ibc_alltoall_alg ibc_alltoall_alg_hypercube = {
	.name = "hypercube",
	.desc = "eq. 1: hypercube over two-sided messages, consolidated by copies (p a power of two)",
	.needs = IBC_ALLTOALL_NEEDS_TWO_SIDED | IBC_ALLTOALL_NEEDS_POW2 |
		 IBC_ALLTOALL_NEEDS_USER_MEM,
	.arg = &kind_hcube,
	.setup = comb_setup, .run = comb_run, .teardown = comb_teardown,
	.rounds = hcube_rounds,
};

const struct ibc_alltoall_alg ibc_alltoall_alg_bruck = {
	.name = "bruck",
	.desc = "Bruck's combining algorithm over two-sided messages, with copies (any p)",
	.needs = IBC_ALLTOALL_NEEDS_TWO_SIDED | IBC_ALLTOALL_NEEDS_USER_MEM,
	.arg = &kind_bruck,
	.setup = comb_setup, .run = comb_run, .teardown = comb_teardown,
	.rounds = bruck_rounds,
};
