/* ibchar-alltoall: the all-to-all suite (Sur et al.) over the fork /
 * launcher / tcp bootstrap; the suite is impl/alltoall/alltoall_suite.c on
 * the suite driver (impl/suite). */
#include "alltoall/alltoall_suite.h"

int main(int argc, char **argv)
{
	return ibc_suite_main(&ibc_alltoall_suite, NULL, argc, argv);
}
