/* ibchar-logp: the LoP model's kernels (Hoefler & Rehm) over the fork /
 * launcher / tcp bootstrap; the suite is impl/logp/logp_suite.c on the
 * suite driver (impl/suite). */
#include "logp/logp_suite.h"

int main(int argc, char **argv)
{
	return ibc_suite_main(&ibc_logp_suite, NULL, argc, argv);
}
