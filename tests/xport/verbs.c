/* The verbs backend on one host (Soft-RoCE in one guest, or any machine with
 * an active RDMA device): 4 ranks from the fork bootstrap run the checks of
 * verbs_checks.h; rank 0 prints TAP.  Skips when no RDMA device is active,
 * so the host's `make check` passes. */
#include "verbs_checks.h"

#include <stdlib.h>

#define NPROCS 4

int main(void)
{
	ibc_log_init("xport-verbs.t");
	const struct ibc_xport_ops *v = ibc_xport_backend_find("verbs");
	struct ibc_xport_params p;
	ibc_xport_params_init(&p);
	if (!v || v->probe(&p) != IBC_OK)
		tap_skip_all("no RDMA device with an active port");
	const char *np = getenv("IBC_TEST_NPROCS");
	int n = np ? atoi(np) : NPROCS;
	if (n < 2)
		n = 2;
	struct ibc_boot *b;
	int rc = ibc_boot_open("fork", n, &b);
	if (rc != IBC_OK)
		tap_bail_out("fork bootstrap: %s", ibc_status_str(rc));
	int print = b->rank == 0;
	if (print)
		tap_plan_none();
	vc_run(b, print);
	rc = ibc_boot_close(b);
	if (!print)
		return 0;
	tap_ok(rc == IBC_OK, "every rank exited cleanly");
	return tap_done();
}
