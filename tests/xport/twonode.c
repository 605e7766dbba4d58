/* The verbs backend across nodes: ranks started by hand on several hosts
 * (two Soft-RoCE guests: guest 1 = 10.0.0.1 is rank 0 and listens) find each
 * other through the tcp bootstrap (IBC_BOOT=tcp, IBC_BOOT_RANK, IBC_BOOT_SIZE,
 * IBC_BOOT_ROOT=host:port) and run the checks of verbs_checks.h: RC write,
 * read, write-imm, send, atomics, multicast and error completions across the
 * wire.  Every rank prints the same TAP stream (one per guest console).
 * Skips when IBC_BOOT is not tcp or no RDMA device is active. */
#include "verbs_checks.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
	ibc_log_init("xport-twonode.t");
	const char *boot = getenv("IBC_BOOT");
	if (!boot || strcmp(boot, "tcp") != 0)
		tap_skip_all("IBC_BOOT=tcp not set (run by tests/rxe/two-guest.sh)");
	const struct ibc_xport_ops *v = ibc_xport_backend_find("verbs");
	struct ibc_xport_params p;
	ibc_xport_params_init(&p);
	if (!v || v->probe(&p) != IBC_OK)
		tap_skip_all("no RDMA device with an active port");
	struct ibc_boot *b;
	int rc = ibc_boot_open("tcp", 0, &b);
	if (rc != IBC_OK)
		tap_bail_out("tcp bootstrap: %s", ibc_status_str(rc));
	tap_plan_none();
	tap_diag("rank %d of %d, node %d of %d", b->rank, b->size, b->node_id, b->num_nodes);
	tap_ok(b->num_nodes == b->size, "every rank is on its own node (%d nodes)", b->num_nodes);
	vc_run(b, 1);
	rc = ibc_boot_close(b);
	tap_ok(rc == IBC_OK, "bootstrap closed on every rank");
	return tap_done();
}
