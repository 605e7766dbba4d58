/* ibchar-link: link-level benchmarks between two ranks over any transport
 * (perftest-equivalent): write-lat, read-lat, send-lat (one-way latency) and
 * write-bw (time per message with a window of writes; MB/s in extra).  The
 * kernels, and --perftest's impl=perftest rows (ib_write_lat / ib_write_bw on
 * verbs), are in impl/link/link.h.  Every row keeps the whole distribution
 * (median, p99, max: no dropped tail). */
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "link/link.h"
#include "xport/xport.h"

#include <stdio.h>

static struct ibc_harness_cli cli = IBC_HARNESS_CLI_INIT;
static int list_only, perftest;
static long window = 64;

static const struct ibc_opt opts[] = {
	IBC_HARNESS_CLI_OPTS(cli),
	{ .name = "window", .type = IBC_OPT_INT, .dest = &window, .metavar = "N",
	  .help = "write-bw: writes in flight per window", .min = 1, .max = IBC_LINK_MAX_WINDOW },
	{ .name = "perftest", .type = IBC_OPT_FLAG, .dest = &perftest,
	  .help = "also run perftest's ib_write_lat / ib_write_bw (verbs; impl=perftest rows)" },
	{ .name = "list", .type = IBC_OPT_FLAG, .dest = &list_only,
	  .help = "print the variants, one per line, and exit" },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	.prog = "ibchar-link",
	.synopsis = "[OPTIONS]",
	.summary = "Link-level benchmarks between two ranks over a transport (--xport shm, "
		   "verbs or auto): write-lat, read-lat, send-lat (one-way latency) and write-bw "
		   "(time per message with a window of writes; MB/s in extra).  Sizes default "
		   "to 1..4M; rows go to DIR/results.csv.",
	.opts = opts,
};

int main(int argc, char **argv)
{
	struct ibc_harness_op ops[IBC_LINK_MAX_OPS];
	struct ibc_link_params lp = { .max_bytes = 0, .window = 0 };
	struct ibc_xport_params xp;
	struct ibc_harness_params p;
	struct ibc_link *link = NULL;
	struct ibc_xport *x;
	struct ibc_boot *boot;
	size_t i, n = 0, nall;
	int rc, rc2;

	ibc_log_init("ibchar-link");
	rc = ibc_opt_parse_all(&spec, argc, argv);
	if (rc != IBC_OK)
		return rc == IBC_OPT_HELP_SHOWN ? 0 : ibc_status_exit_code(rc);
	if (list_only) {
		for (i = 0; i < ibc_link_variant_count(); i++)
			printf("%s\n", ibc_link_variant_name(i));
		return 0;
	}
	for (i = 0; i < ibc_link_variant_count(); i++)
		n += (size_t)ibc_harness_cli_wants(&cli, ibc_link_variant_name(i));
	if (n == 0 || ibc_harness_cli_nranks(&cli, 2) != 2) {
		fprintf(stderr, "ibchar-link: needs --ranks 2 and variants among write-lat, "
				"read-lat, send-lat, write-bw\n");
		return 2;
	}
	ibc_harness_params_init(&p);
	p.suite = "link";
	p.kind = IBC_HARNESS_LATENCY;
	p.nsizes = 0;
	for (size_t b = 1; b <= 4u * 1024 * 1024; b *= 2)
		p.sizes[p.nsizes++] = b;
	ibc_harness_params_argv(&p, argc, argv);
	rc = ibc_harness_cli_apply(&cli, &p);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	for (i = 0; i < p.nsizes; i++)
		if (p.sizes[i] > lp.max_bytes)
			lp.max_bytes = p.sizes[i];
	lp.window = window;
	lp.perftest = perftest;

	rc = ibc_timer_init();
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = ibc_harness_cli_boot(&cli, 2, &boot);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	ibc_xport_params_init(&xp);
	xp.backend = cli.xport;
	xp.wait = ibc_wait_decide(boot->local_size);
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc != IBC_OK)
		goto err_close_boot;
	rc = ibc_xport_connect(x, NULL);
	if (rc == IBC_OK)
		rc = ibc_link_open(x, &lp, &link);
	if (rc != IBC_OK)
		goto err_close_xport;
	nall = ibc_link_ops_build(link, ops, IBC_LINK_MAX_OPS);
	for (i = 0, n = 0; i < nall; i++)
		if (ibc_harness_cli_wants(&cli, ops[i].variant))
			ops[n++] = ops[i];
	p.xport = x->caps.backend;
	p.device = x->caps.device;
	ibc_link_probe_set(link, &p);
	rc = ibc_harness_run(boot, &p, ops, n);
	ibc_link_close(link);
err_close_xport:
	rc2 = ibc_xport_close(x);
	if (rc == IBC_OK)
		rc = rc2;
err_close_boot:
	rc2 = ibc_boot_close(boot);
	return ibc_status_exit_code(rc != IBC_OK ? rc : rc2);
}
