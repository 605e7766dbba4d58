/* ibchar-probe: the placement probe suite.  Two ranks (fork bootstrap)
 * ping-pong one cache line; probe-cross pins them to different PUs,
 * probe-same to one PU (each waiter yields, so this is the context-switch
 * path).  Both variants run interleaved through the harness; one-way
 * latency = round trip / 2. */
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/topo.h"
#include "harness/harness.h"

#include <stdio.h>
#include <string.h>

struct probe_op {
	struct ibc_probe *probe;
	int same;      /* 1: both ranks on PU 0 */
	int yield;
};

static int op_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct probe_op *po = arg;
	struct ibc_topo_info ti;

	(void)pt;
	if (!po->same && (ibc_topo_query(&ti) != IBC_OK || ti.allowed_pus < 2)) {
		ibc_info("probe-cross needs two PUs");
		return IBC_ERR_UNSUPPORTED;
	}
	po->yield = po->same ? 1 : (ibc_harness_wait_get(h) == IBC_WAIT_SPIN ? 0 : 100);
	return ibc_probe_open(ibc_harness_boot(h), 0, 1, &po->probe);
}

static int op_prepare(struct ibc_harness *h, void *arg)
{
	struct probe_op *po = arg;
	int rc = ibc_topo_pin(po->same ? 0 : ibc_harness_boot(h)->rank);

	return rc == IBC_ERR_UNSUPPORTED ? IBC_OK : rc;
}

static int op_run(struct ibc_harness *h, void *arg)
{
	struct probe_op *po = arg;

	(void)h;
	return ibc_probe_round(po->probe, po->yield);
}

static int op_teardown(struct ibc_harness *h, void *arg)
{
	struct probe_op *po = arg;

	(void)h;
	ibc_probe_close(po->probe);
	po->probe = NULL;
	return IBC_OK;
}

static struct ibc_harness_cli cli = IBC_HARNESS_CLI_INIT;
static int list_only;

static const struct ibc_opt opts[] = {
	IBC_HARNESS_CLI_OPTS(cli),
	{ .name = "list", .type = IBC_OPT_FLAG, .dest = &list_only, .help = "print the variants, one per line, and exit" },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	.prog = "ibchar-probe",
	.synopsis = "[OPTIONS]",
	.summary = "Placement probe: one-way cache-line ping-pong latency between two processes "
		   "pinned to different PUs (probe-cross) and to the same PU (probe-same), "
		   "measured interleaved; rows go to DIR/results.csv.",
	.opts = opts,
};

int main(int argc, char **argv)
{
	static struct probe_op cross = { .same = 0 }, same = { .same = 1 };
	struct ibc_harness_op ops[2], all[2] = {
		{ .variant = "probe-cross", .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5,
		  .arg = &cross, .setup = op_setup, .prepare = op_prepare, .run = op_run,
		  .teardown = op_teardown },
		{ .variant = "probe-same", .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5,
		  .arg = &same, .setup = op_setup, .prepare = op_prepare, .run = op_run,
		  .teardown = op_teardown },
	};
	struct ibc_harness_params p;
	struct ibc_boot *boot;
	size_t i, n = 0;
	int rc, rc_close;

	ibc_log_init("ibchar-probe");
	rc = ibc_opt_parse_all(&spec, argc, argv);
	if (rc != IBC_OK)
		return rc == IBC_OPT_HELP_SHOWN ? 0 : ibc_status_exit_code(rc);
	if (list_only) {
		for (i = 0; i < 2; i++)
			printf("%s\n", all[i].variant);
		return 0;
	}
	for (i = 0; i < 2; i++)
		if (ibc_harness_cli_wants(&cli, all[i].variant))
			ops[n++] = all[i];
	if (n == 0 || ibc_harness_cli_nranks(&cli, 2) != 2) {
		fprintf(stderr, "ibchar-probe: needs --ranks 2 and a variant of probe-cross, probe-same\n");
		return 2;
	}
	ibc_harness_params_init(&p);
	p.suite = "probe";
	p.kind = IBC_HARNESS_LATENCY;
	p.xport = "shm";
	p.device = "cache line (MAP_SHARED)";
	p.pin = 0;        /* the variants pin themselves */
	p.pinning = "probe-cross: rank r on PU r; probe-same: both ranks on PU 0 (re-pinned each iteration)";
	p.probe = NULL;   /* the suite is the probe */
	ibc_harness_params_argv(&p, argc, argv);
	rc = ibc_harness_cli_apply(&cli, &p);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = ibc_harness_cli_boot(&cli, 2, &boot);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = ibc_harness_run(boot, &p, ops, n);
	rc_close = ibc_boot_close(boot);
	return ibc_status_exit_code(rc != IBC_OK ? rc : rc_close);
}
