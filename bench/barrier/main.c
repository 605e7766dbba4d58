/* ibchar-barrier: the barrier suite (Kini et al.) over the fork / launcher /
 * tcp bootstrap; the suite is impl/barrier/barrier_suite.c on the suite
 * driver (impl/suite). */
#include "barrier/barrier_suite.h"

int main(int argc, char **argv)
{
	return ibc_suite_main(&ibc_barrier_suite, NULL, argc, argv);
}
