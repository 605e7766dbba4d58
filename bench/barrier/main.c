/* ibchar-barrier: the barrier suite (Kini et al.) over the fork / launcher /
 * tcp bootstrap.  The driver (options, the operations built from the
 * barrier table, the harness run) is shared with the host-MPI build
 * (mpi.c) in driver.h. */
#include "driver.h"

static int boot_open(int *argc, char ***argv, struct ibc_boot **out)
{
	(void)argc;
	(void)argv;
	return ibc_harness_cli_boot(&bar_cli, 2, out);
}

int main(int argc, char **argv)
{
	static const struct bar_driver d = {
		.prog = "ibchar-barrier",
		.boot_open = boot_open,
	};

	return bar_driver_main(&d, argc, argv);
}
