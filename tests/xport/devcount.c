/* impl/xport/devcount: a port's hw_counters from a directory laid out as
 * sysfs lays out /sys/class/infiniband (rxe's names): which files are
 * counters (not lifespan, not one without a decimal), the deltas a row
 * gets (only the counters that moved, dev_ prefixed, in name order), a
 * device without counters or without a port, and the merge over ranks
 * (keys summed, a rank without counters, a malformed part skipped). */
#include "core/status.h"
#include "xport/devcount.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void put_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/rxe0/ports/1/hw_counters/%s", root, name);
	f = fopen(path, "w");
	if (f == NULL)
		tap_bail_out("cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

int main(void)
{
	struct ibc_devcount d;
	uint64_t before[IBC_DEVCOUNT_MAX], after[IBC_DEVCOUNT_MAX];
	char buf[IBC_DEVCOUNT_TEXT], texts[3][128], cmd[300];
	int rc;

	tap_plan(13);
	snprintf(root, sizeof(root), "/tmp/ibc-devcount.XXXXXX");
	if (mkdtemp(root) == NULL)
		tap_bail_out("mkdtemp failed");
	mkdirs("rxe0/ports/1/hw_counters");
	mkdirs("mlx0/ports/1");
	put_file("sent_pkts", "100\n");
	put_file("rcvd_pkts", "100\n");
	put_file("completer_retry_err", "6\n");
	put_file("duplicate_request", "16\n");
	put_file("lifespan", "12\n");
	put_file("garbage", "n/a\n");

	rc = ibc_devcount_open(&d, root, "rxe0:1");
	tap_is_int(rc, IBC_OK, "rxe0:1 opens");
	tap_is_int((long long)d.n, 4, "four counters: lifespan (a setting) and a file without a decimal left out");
	tap_ok(d.n == 4 && strcmp(d.name[0], "completer_retry_err") == 0 && strcmp(d.name[3], "sent_pkts") == 0,
	       "in name order (%s .. %s)", d.name[0], d.n ? d.name[d.n - 1] : "");
	tap_is_int(ibc_devcount_read(&d, before), IBC_OK, "read");
	put_file("sent_pkts", "1124\n");
	put_file("duplicate_request", "20\n");
	tap_is_int(ibc_devcount_read(&d, after), IBC_OK, "read again");
	ibc_devcount_format(&d, before, after, buf, sizeof(buf));
	tap_is_str(buf, "dev_duplicate_request=4;dev_sent_pkts=1024", "the counters that moved, their deltas");
	ibc_devcount_format(&d, before, before, buf, sizeof(buf));
	tap_is_str(buf, "", "nothing moved: no key");
	tap_is_int(ibc_devcount_open(&d, root, "mlx0:1"), IBC_ERR_UNSUPPORTED, "a port without hw_counters");
	tap_is_int(ibc_devcount_open(&d, root, "shm"), IBC_ERR_INVAL, "a device without a port");
	snprintf(cmd, sizeof(cmd), "%s/rxe0/ports/1/hw_counters/sent_pkts", root);
	ibc_devcount_open(&d, root, "rxe0:1");
	unlink(cmd);
	tap_is_int(ibc_devcount_read(&d, after), IBC_ERR_IO, "a counter gone: IBC_ERR_IO");

	memset(texts, 0, sizeof(texts));
	snprintf(texts[0], sizeof(texts[0]), "dev_sent_pkts=1024;dev_duplicate_request=4");
	snprintf(texts[2], sizeof(texts[2]), "dev_sent_pkts=1000;dev_rcvd_seq_err=2;bad;=3;x=y");
	ibc_devcount_merge(&texts[0][0], sizeof(texts[0]), 3, buf, sizeof(buf));
	tap_is_str(buf, "dev_sent_pkts=2024;dev_duplicate_request=4;dev_rcvd_seq_err=2",
		   "merged over ranks: summed, a rank without counters, malformed parts left out");
	ibc_devcount_merge(&texts[1][0], sizeof(texts[0]), 1, buf, sizeof(buf));
	tap_is_str(buf, "", "one rank without counters: empty");
	ibc_devcount_merge(&texts[0][0], sizeof(texts[0]), 1, buf, 20);
	tap_is_str(buf, "dev_sent_pkts=1024", "a key that does not fit is left out whole");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", root);
	return tap_done();
}
