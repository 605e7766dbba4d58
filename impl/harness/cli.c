/* The options every bench driver shares, applied to harness parameters. */
#include "harness/harness.h"
#include "core/log.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

int ibc_harness_cli_apply(const struct ibc_harness_cli *c, struct ibc_harness_params *p)
{
	size_t i;

	if (c->sizes.n > IBC_HARNESS_MAX_SIZES) {
		ibc_error("harness: at most %d sizes per run (%zu given)", IBC_HARNESS_MAX_SIZES,
			  c->sizes.n);
		return IBC_ERR_INVAL;
	}
	if (c->sizes.n > 0) {
		for (i = 0; i < c->sizes.n; i++) {
			if (c->sizes.v[i] < 0) {
				ibc_error("harness: negative size %lld", c->sizes.v[i]);
				return IBC_ERR_INVAL;
			}
			p->sizes[i] = (size_t)c->sizes.v[i];
		}
		p->nsizes = c->sizes.n;
	}
	p->out_dir = c->out;
	if (c->launcher != NULL && strcmp(c->launcher, "auto") != 0)
		p->launcher = c->launcher;
	if (c->run_id != NULL)
		p->run_id = c->run_id;
	if (c->iters > 0)
		p->iters = c->iters;
	if (c->warmup >= 0)
		p->warmup = c->warmup;
	p->budget_s = c->budget;
	p->validate = c->validate;
	if (c->quiet)
		p->print_rows = 0;
	p->sync_mode = (enum ibc_harness_sync_mode)c->sync;
	return IBC_OK;
}

int ibc_harness_cli_wants(const struct ibc_harness_cli *c, const char *variant)
{
	return c->variants.n == 0 || ibc_opt_strlist_has(&c->variants, variant) ||
	       ibc_opt_strlist_has(&c->variants, "all");
}

int ibc_harness_cli_nranks(const struct ibc_harness_cli *c, int dflt)
{
	return c->ranks.n > 0 ? (int)c->ranks.v[0] : dflt;
}

int ibc_harness_cli_boot(const struct ibc_harness_cli *c, int dflt_ranks, struct ibc_boot **out)
{
	const char *l = c->launcher != NULL ? c->launcher : "auto";
	const char *env = getenv("IBC_BOOT");
	int n = ibc_harness_cli_nranks(c, dflt_ranks);

	*out = NULL;
	if (c->ranks.n > 1) {
		ibc_error("harness: a bench run takes one rank count (--ranks %lld); the runner sweeps lists",
			  c->ranks.v[0]);
		return IBC_ERR_INVAL;
	}
	if (getenv("PMI_FD") != NULL || (env != NULL && strcmp(env, "tcp") == 0))
		return ibc_boot_open(NULL, n, out);
	if (strcmp(l, "fork") == 0 || strcmp(l, "local") == 0 || strcmp(l, "auto") == 0)
		return ibc_boot_open(n > 1 ? "fork" : "single", n, out);
	ibc_error("harness: --launcher %s: this binary was not started by it (use 'ibchar run' or the "
		  "*-<mpi> binary under mpirun)", l);
	return IBC_ERR_INVAL;
}
