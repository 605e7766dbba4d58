/* ibchar-link: link-level benchmarks between two ranks over any transport,
 * beside perftest (impl/link/link.h) on the suite driver (impl/suite). */
#include "link/link.h"

int main(int argc, char **argv)
{
	return ibc_suite_main(&ibc_link_suite, NULL, argc, argv);
}
