/* Barrier: the algorithm table, lookup, parameter validation, listing, and
 * the instance life cycle common to all algorithms. */
#include "barrier/barrier_impl.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

/* The table: add an algorithm here and it is listed, swept and tested. */
static const struct ibc_barrier_alg *const algs[] = {
	&ibc_barrier_alg_rpe,
	&ibc_barrier_alg_rds,
	&ibc_barrier_alg_rgm,
	&ibc_barrier_alg_pe,
	&ibc_barrier_alg_ds,
};
#define NALGS (sizeof(algs) / sizeof(algs[0]))

struct ibc_family_kind ibc_barrier_family_kind = { "barrier", 0 };

size_t ibc_barrier_alg_count(void)
{
	return NALGS;
}

const struct ibc_barrier_alg *ibc_barrier_alg_get(size_t i)
{
	return i < NALGS ? algs[i] : NULL;
}

const struct ibc_barrier_alg *ibc_barrier_alg_find(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < NALGS; i++)
		if (strcmp(algs[i]->name, name) == 0)
			return algs[i];
	return NULL;
}

const char *ibc_barrier_alg_names(void)
{
	static char buf[256];
	size_t i, used = 0;

	if (buf[0])
		return buf;
	for (i = 0; i < NALGS && used + 1 < sizeof(buf); i++) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "," : "",
				 algs[i]->name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

int ibc_barrier_alg_usable(const struct ibc_barrier_alg *alg, const struct ibc_xport *x,
			   char *why, size_t whylen)
{
	const char *miss = NULL;

	if ((alg->needs & IBC_BARRIER_NEEDS_MULTICAST) && !x->caps.mcast)
		miss = "multicast";
	if (miss) {
		if (why && whylen)
			snprintf(why, whylen, "barrier %s needs %s, which transport %s (%s) lacks",
				 alg->name, miss, x->caps.backend, x->caps.device);
		return IBC_ERR_UNSUPPORTED;
	}
	return IBC_OK;
}

void ibc_barrier_params_init(struct ibc_barrier_params *p)
{
	memset(p, 0, sizeof(*p));
	p->fanin = 0;
	p->timeout_us = 500.0;
	p->deadline_s = 60.0;
}

static int fanin_form_ok(int l)
{
	return l >= 1 && ibc_pattern_pow2_is(l + 1);
}

int ibc_barrier_params_check(const struct ibc_barrier_alg *alg, int n,
			     const struct ibc_barrier_params *p, int *fanin_out)
{
	const char *name = alg ? alg->name : "?";
	int fanin = 0;

	if (n < 1) {
		ibc_error("barrier %s: N = %d ranks; a barrier needs N >= 1", name, n);
		return IBC_ERR_INVAL;
	}
	if (n > IBC_PATTERN_MAX_N) {
		ibc_error("barrier %s: N = %d ranks is more than %d", name, n, IBC_PATTERN_MAX_N);
		return IBC_ERR_INVAL;
	}
	if (!(p->deadline_s > 0)) {
		ibc_error("barrier %s: deadline %g s must be > 0", name, p->deadline_s);
		return IBC_ERR_INVAL;
	}
	if (alg && (alg->needs & IBC_BARRIER_NEEDS_MULTICAST)) {
		if (!(p->timeout_us > 0)) {
			ibc_error("barrier %s: NAK timeout %g us must be > 0", name, p->timeout_us);
			return IBC_ERR_INVAL;
		}
		/* default 7, the paper's choice at every N; l >= N - 1 is the
		 * flat gather (barrier_rgm.c) */
		fanin = p->fanin == 0 ? 7 : p->fanin;
		if (!fanin_form_ok(fanin)) {
			ibc_error("barrier %s: fan-in %d is not of the form 2^k - 1 "
				  "(1, 3, 7, 15, 31, ...)", name, fanin);
			return IBC_ERR_INVAL;
		}
	}
	if (fanin_out)
		*fanin_out = fanin;
	return IBC_OK;
}

int ibc_barrier_create(struct ibc_xport *x, const char *name,
		       const struct ibc_barrier_params *p, struct ibc_barrier **out)
{
	const struct ibc_barrier_alg *alg;
	struct ibc_barrier_params defaults;
	struct ibc_barrier *b;
	char why[200];
	int rc, fanin;

	*out = NULL;
	alg = ibc_barrier_alg_find(name);
	if (!alg) {
		ibc_error("barrier: no algorithm named '%s' (known: %s)", name ? name : "(null)",
			  ibc_barrier_alg_names());
		return IBC_ERR_NOTFOUND;
	}
	if (!p) {
		ibc_barrier_params_init(&defaults);
		p = &defaults;
	}
	rc = ibc_barrier_params_check(alg, x->size, p, &fanin);
	if (rc)
		return rc;
	rc = ibc_barrier_alg_usable(alg, x, why, sizeof(why));
	if (rc) {
		ibc_error("%s", why);
		return rc;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return IBC_ERR_NOMEM;
	if (alg->priv_size) {
		b->priv = calloc(1, alg->priv_size);
		if (!b->priv) {
			rc = IBC_ERR_NOMEM;
			goto err_free_b;
		}
	}
	b->alg = alg;
	b->x = x;
	b->params = *p;
	b->fanin = fanin;
	b->rank = x->rank;
	b->size = x->size;
	b->deadline_ns = (int64_t)(p->deadline_s * 1e9);
	rc = ibc_family_add(&b->fm, &ibc_barrier_family_kind, ibc_barrier_wc, b);
	if (rc)
		goto err_free_priv;
	*out = b;
	return IBC_OK;

err_free_priv:
	free(b->priv);
err_free_b:
	free(b);
	return rc;
}

int ibc_barrier_setup(struct ibc_barrier *b)
{
	int rc;

	if (b->failed)
		return b->failed;
	if (b->ready)
		return IBC_OK;
	rc = b->alg->setup(b);
	if (rc) {
		b->failed = rc;
		return rc;
	}
	b->ready = 1;
	return IBC_OK;
}

int ibc_barrier_run(struct ibc_barrier *b)
{
	int rc;

	if (!b->ready || b->failed) {
		rc = ibc_barrier_setup(b);
		if (rc)
			return rc;
	}
	b->id++;
	rc = b->alg->run(b, b->id);
	if (rc) {
		if (!b->failed)
			b->failed = rc;
		return rc;
	}
	b->cnt.barriers++;
	return IBC_OK;
}

int ibc_barrier_destroy(struct ibc_barrier *b)
{
	int rc = IBC_OK, rc2;

	if (!b)
		return IBC_OK;
	/* teardown is collective only once set up (it checks b->id); it also
	 * frees what a half-done setup left */
	if (b->alg->teardown)
		rc = b->alg->teardown(b);
	rc2 = ibc_barrier_shared_detach(b);
	if (!rc)
		rc = rc2;
	if (b->ready) {
		/* nobody frees memory a peer may still write or read */
		rc2 = ibc_boot_barrier(b->x->boot);
		if (!rc)
			rc = rc2;
	}
	ibc_barrier_common_free(b);
	ibc_family_remove(&b->fm);
	free(b->priv);
	free(b);
	return rc;
}

const struct ibc_barrier_alg *ibc_barrier_alg_of(const struct ibc_barrier *b)
{
	return b->alg;
}

int ibc_barrier_fanin(const struct ibc_barrier *b)
{
	return b->fanin;
}

void ibc_barrier_counters_get(struct ibc_barrier *b, struct ibc_barrier_counters *out)
{
	if (b->alg->counters)
		b->alg->counters(b);
	*out = b->cnt;
}

int ibc_barrier_counters_sum(struct ibc_barrier *b, struct ibc_barrier_counters *out)
{
	struct ibc_barrier_counters mine, *all;
	int r, rc;

	ibc_barrier_counters_get(b, &mine);
	all = calloc((size_t)b->size, sizeof(*all));
	if (!all)
		return IBC_ERR_NOMEM;
	rc = ibc_boot_allgather(b->x->boot, &mine, all, sizeof(mine));
	if (rc) {
		free(all);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	out->barriers = all[0].barriers;
	for (r = 0; r < b->size; r++) {
		out->naks += all[r].naks;
		out->retransmits += all[r].retransmits;
		out->duplicates += all[r].duplicates;
		out->pulls += all[r].pulls;
		out->mcast_drops += all[r].mcast_drops;
		out->gather_spins += all[r].gather_spins;
		out->spin_timeouts += all[r].spin_timeouts;
	}
	free(all);
	return IBC_OK;
}

static void needs_format(unsigned needs, char *buf, size_t len)
{
	static const struct { unsigned bit; const char *name; } tab[] = {
		{ IBC_BARRIER_NEEDS_RDMA_WRITE, "rdma-write" },
		{ IBC_BARRIER_NEEDS_RDMA_READ, "rdma-read" },
		{ IBC_BARRIER_NEEDS_TWO_SIDED, "send-recv" },
		{ IBC_BARRIER_NEEDS_MULTICAST, "multicast" },
	};
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		int w;

		if (!(needs & tab[i].bit))
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", tab[i].name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

void ibc_barrier_list_print(FILE *out, int verbose)
{
	size_t i;

	fprintf(out, "barrier algorithms:\n");
	for (i = 0; i < NALGS; i++) {
		const struct ibc_barrier_alg *a = algs[i];
		const struct ibc_barrier_tunable *t;
		char needs[96];

		needs_format(a->needs, needs, sizeof(needs));
		fprintf(out, "  %-4s  %s\n        needs: %s\n", a->name, a->desc, needs);
		if (!verbose)
			continue;
		for (t = a->tunables; t && t->name; t++)
			fprintf(out, "        tunable %-10s default %-6s %s\n", t->name, t->dflt,
				t->help);
	}
}

int ibc_barrier_alg_rounds(const char *name, int n, long fanin, struct ibc_pattern_round *r,
			   int cap)
{
	const struct ibc_barrier_alg *alg = ibc_barrier_alg_find(name);
	struct ibc_barrier_params p;
	int l = 0;

	if (alg == NULL || alg->rounds == NULL)
		return IBC_ERR_NOTFOUND;
	if (n < 1 || n > IBC_PATTERN_MAX_N)
		return IBC_ERR_INVAL;
	ibc_barrier_params_init(&p);
	p.fanin = fanin > 0 ? (int)fanin : 0;
	if (ibc_barrier_params_check(alg, n, &p, &l) != IBC_OK)
		return IBC_ERR_INVAL;
	return alg->rounds(n, l, r, cap);
}
