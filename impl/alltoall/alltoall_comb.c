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
	enum ibc_pattern_comb kind;
	unsigned char *work, *pack, *unpack;
	size_t cap;      /* bytes of each buffer */
};

static int comb_setup(struct ibc_alltoall *a)
{
	struct comb_priv *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return IBC_ERR_NOMEM;
	c->kind = *(const enum ibc_pattern_comb *)a->alg->arg;
	a->priv = c;
	return a2a_p2p_setup(a);
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
	int n = a->size, nsteps = ibc_pattern_comb_nsteps(c->kind, n), s, k, j, rc;
	const unsigned char *in = sbuf;
	unsigned char *out = rbuf;

	rc = bufs_fit(a, c, (size_t)n * m);
	for (k = 0; rc == IBC_OK && k < n; k++)
		a2a_copy(a, c->work + (size_t)k * m,
			 in + (size_t)ibc_pattern_comb_in_block(c->kind, n, a->rank, k) * m, m);
	for (s = 0; rc == IBC_OK && s < nsteps; s++) {
		struct ibc_pattern_step st;

		a2a_jitter(a);
		ibc_pattern_comb_step_get(c->kind, n, a->rank, s, &st);
		for (k = 0, j = 0; k < n; k++)
			if (ibc_pattern_comb_moves(c->kind, n, a->rank, s, k) == 1)
				a2a_copy(a, c->pack + (size_t)j++ * m, c->work + (size_t)k * m, m);
		rc = a2a_sendrecv(a, st.send_to, c->pack, (size_t)j * m, st.recv_from, c->unpack,
				  (size_t)j * m, 0);
		for (k = 0, j = 0; rc == IBC_OK && k < n; k++)
			if (ibc_pattern_comb_moves(c->kind, n, a->rank, s, k) == 1)
				a2a_copy(a, c->work + (size_t)k * m, c->unpack + (size_t)j++ * m, m);
	}
	for (k = 0; rc == IBC_OK && k < n; k++)
		a2a_copy(a, out + (size_t)ibc_pattern_comb_out_block(c->kind, n, a->rank, k) * m,
			 c->work + (size_t)k * m, m);
	return rc ? rc : a2a_drain(a);
}

static void comb_teardown(struct ibc_alltoall *a)
{
	struct comb_priv *c = a->priv;

	if (c == NULL)
		return;
	bufs_free(a, c);
	free(c);
	a->priv = NULL;
}

static const enum ibc_pattern_comb kind_hcube = IBC_PATTERN_COMB_HCUBE;
static const enum ibc_pattern_comb kind_bruck = IBC_PATTERN_COMB_BRUCK;

const struct ibc_alltoall_alg ibc_alltoall_alg_hypercube = {
	.name = "hypercube",
	.desc = "eq. 1: hypercube over two-sided messages, consolidated by copies (p a power of two)",
	.needs = IBC_ALLTOALL_NEEDS_TWO_SIDED | IBC_ALLTOALL_NEEDS_POW2 |
		 IBC_ALLTOALL_NEEDS_USER_MEM,
	.arg = &kind_hcube,
	.setup = comb_setup, .run = comb_run, .teardown = comb_teardown,
};

const struct ibc_alltoall_alg ibc_alltoall_alg_bruck = {
	.name = "bruck",
	.desc = "Bruck's combining algorithm over two-sided messages, with copies (any p)",
	.needs = IBC_ALLTOALL_NEEDS_TWO_SIDED | IBC_ALLTOALL_NEEDS_USER_MEM,
	.arg = &kind_bruck,
	.setup = comb_setup, .run = comb_run, .teardown = comb_teardown,
};
