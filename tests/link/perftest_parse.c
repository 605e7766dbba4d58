/* impl/link/perftest.c: parsing perftest clients' output (no perftest needed). */
#include "core/status.h"
#include "link/perftest.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static int parse(const char *text, enum ibc_link_perftest_tool tool, size_t bytes,
		 struct ibc_link_perftest_result *r)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	if (f == NULL)
		return IBC_ERR_SYS;
	rc = ibc_link_perftest_parse(f, tool, bytes, r);
	fclose(f);
	return rc;
}

int main(void)
{
	static const char lat[] =
		" RDMA_Write Latency Test\n"
		"---------------------------------------------------------------\n"
		"#, usec\n"
		"1, 2.50\n"
		"2, 1.75\n"
		"3, 3.00\n"
		"\n"
		" #bytes #iterations t_min[usec] t_max[usec]\n"
		" 8       3           1.75        3.00\n"
		"---------------------------------------------------------------\n";
	static const char bw[] =
		" RDMA_Write BW Test\n"
		" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
		" 4096       200              950.10             900.25               0.230464\n"
		"---------------------------------------------------------------\n";
	/* what ib_write_bw prints when its cycle-counter calibration fails on a
	 * busy host: the numbers that follow are computed with 0 MHz */
	static const char busy[] =
		"Conflicting CPU frequency values detected: 0.000000 != 2394.454000\n"
		"Correlation coefficient r^2: 0.808764 < 0.9\n"
		" RDMA_Write BW Test\n"
		" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
		" 8          200              0.00               0.00   		   0.000000\n";
	struct ibc_link_perftest_result r = { 0 };

	tap_plan(13);
	tap_is_int(parse(lat, IBC_LINK_PERFTEST_WRITE_LAT, 8, &r), IBC_OK, "latency output parses");
	tap_is_int(r.n, 3, "three one-way samples");
	tap_ok(r.n == 3 && r.us[0] == 2.5 && r.us[1] == 1.75 && r.us[2] == 3.0,
	       "samples in order, as printed");
	tap_is_str(r.last_line, " 8       3           1.75        3.00", "last non-empty line kept");
	ibc_link_perftest_result_reset(&r);
	tap_is_int(r.n, 0, "reset forgets the samples");
	tap_is_int(parse(bw, IBC_LINK_PERFTEST_WRITE_BW, 4096, &r), IBC_OK, "bandwidth output parses");
	tap_is_double_within(r.mbps, 900.25, 1e-9, "average MB/s of the size asked for");
	ibc_link_perftest_result_reset(&r);
	parse(bw, IBC_LINK_PERFTEST_WRITE_BW, 8192, &r);
	tap_ok(r.mbps == 0, "another size's line is not taken");
	parse(bw, IBC_LINK_PERFTEST_WRITE_LAT, 4096, &r);
	tap_is_int(r.n, 0, "no latency samples in a bandwidth output");
	tap_ok(!r.clock_bad, "a clean output has a calibrated clock");
	ibc_link_perftest_result_reset(&r);
	tap_is_int(parse(busy, IBC_LINK_PERFTEST_WRITE_BW, 8, &r), IBC_OK, "a busy host's output parses");
	tap_ok(r.clock_bad && r.mbps == 0, "its failed clock calibration is noticed");
	ibc_link_perftest_result_reset(&r);
	tap_ok(!r.clock_bad, "reset forgets it");
	ibc_link_perftest_result_free(&r);
	return tap_done();
}
