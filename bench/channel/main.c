/* ibchar-channel: the channel suite (Liu et al.) over the fork / launcher /
 * tcp bootstrap; the suite is impl/channel/channel_suite.c on the suite
 * driver (impl/suite). */
#include "channel/channel_suite.h"

int main(int argc, char **argv)
{
	return ibc_suite_main(&ibc_channel_suite, NULL, argc, argv);
}
