/* ibchar-probe: the placement probe suite.  Two ranks ping-pong one cache
 * line; probe-cross pins them to different PUs, probe-same to one PU (each
 * waiter yields, so this is the context-switch path); probe-write is the
 * memory pattern of a one-sided write ping-pong (each stores into the line
 * the other polls), pinned as probe-cross.  The variants run interleaved
 * through the suite driver; one-way latency = round trip / 2.
 * Iterations start at a barrier (params.barrier_only): probe-same puts both
 * ranks on one PU, where a common start cannot be kept. */
#include "core/status.h"
#include "core/topo.h"
#include "harness/harness.h"
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

/* the variants' arg: NULL = probe-cross, "same", "write" */
static int is_(const struct ibc_suite_variant *v, const char *kind)
{
	return v->arg != NULL && strcmp(v->arg, kind) == 0;
}

static int p_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		    char *why, size_t cap)
{
	struct ibc_topo_info ti;

	(void)c;
	(void)fanin;
	if (!is_(v, "same") && (ibc_topo_query(&ti) != IBC_OK || ti.allowed_pus < 2)) {
		snprintf(why, cap, "%s needs two PUs", v->name);
		return IBC_ERR_UNSUPPORTED;
	}
	return IBC_OK;
}

struct pinst {
	struct ibc_probe *probe;
	int (*round)(struct ibc_probe *, int yield); /* the variant's round trip */
	int yield;      /* the round's, for the run */
};

static int p_setup(struct ibc_suite_op *o)
{
	struct pinst *pi = calloc(1, sizeof(*pi));
	int rc;

	if (pi == NULL)
		return IBC_ERR_NOMEM;
	/* sharing PU 0, each waiter yields at once */
	pi->yield = is_(o->v, "same") ? 1 : ibc_probe_yield(ibc_harness_wait_get(o->h));
	pi->round = is_(o->v, "write") ? ibc_probe_round_write : ibc_probe_round;
	rc = ibc_probe_open(o->ctx->boot, 0, 1, &pi->probe);
	if (rc != IBC_OK) {
		free(pi);
		return rc;
	}
	o->inst = pi;
	return IBC_OK;
}

static int p_prepare(struct ibc_suite_op *o)
{
	int rc = ibc_topo_pin(is_(o->v, "same") ? 0 : o->ctx->boot->rank);

	return rc == IBC_ERR_UNSUPPORTED ? IBC_OK : rc;
}

static int p_run(struct ibc_suite_op *o)
{
	struct pinst *pi = o->inst;

	return pi->round(pi->probe, pi->yield);
}

static int p_teardown(struct ibc_suite_op *o)
{
	struct pinst *pi = o->inst;

	if (pi != NULL)
		ibc_probe_close(pi->probe);
	free(pi);
	o->inst = NULL;
	return IBC_OK;
}

static void p_params(struct ibc_suite_ctx *c, struct ibc_harness_params *p)
{
	(void)c;
	p->xport = "shm";
	p->device = "cache line (MAP_SHARED)";
	p->pin = 0; /* the variants pin themselves */
	p->pinning = "probe-cross, probe-write: rank r on PU r; probe-same: both ranks on PU 0 (re-pinned each iteration)";
	p->probe = NULL; /* the suite is the probe */
	p->barrier_only = "probe-same puts both ranks on one PU, where a common start cannot be kept";
	p->measures_machine = 1;
}

static const struct ibc_suite_variant variants[] = {
	{ .name = "probe-cross", .desc = "cache-line ping-pong between ranks pinned to PUs 0 and 1",
	  .flags = IBC_SUITE_V_NO_B2B, .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5,
	  .usable = p_usable, .setup = p_setup, .prepare = p_prepare, .run = p_run,
	  .teardown = p_teardown },
	{ .name = "probe-same", .desc = "the same with both ranks on PU 0 (a context switch each way)",
	  .flags = IBC_SUITE_V_NO_B2B, .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5, .arg = "same",
	  .usable = p_usable, .setup = p_setup, .prepare = p_prepare, .run = p_run,
	  .teardown = p_teardown },
	{ .name = "probe-write",
	  .desc = "the memory pattern of a one-sided write ping-pong, pinned as probe-cross: each "
		  "rank stores into the line the other polls (two lines, a pause between polls); "
		  "the floor of a shm write-lat with no transport",
	  .flags = IBC_SUITE_V_NO_B2B, .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5, .arg = "write",
	  .usable = p_usable, .setup = p_setup, .prepare = p_prepare, .run = p_run,
	  .teardown = p_teardown },
};

static const struct ibc_suite_def probe_suite = {
	.name = "probe",
	.prog = "ibchar-probe",
	.summary = "Placement probe: one-way cache-line ping-pong latency between two processes "
		   "pinned to different PUs (probe-cross) and to the same PU (probe-same), and the "
		   "memory pattern of a one-sided write ping-pong (probe-write), measured "
		   "interleaved; rows go to DIR/results.csv.",
	.kind = IBC_HARNESS_LATENCY,
	.min_ranks = 2,
	.max_ranks = 2,
	.default_ranks = 2,
	.variants = variants,
	.nvariants = sizeof(variants) / sizeof(variants[0]),
	.params = p_params,
};

int main(int argc, char **argv)
{
	return ibc_suite_main(&probe_suite, NULL, argc, argv);
}
