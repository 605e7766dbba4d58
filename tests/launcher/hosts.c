/* The test-hosts file (impl/launcher/hosts.c): lines with one or several
 * names, comments, the first good line winning, a bad address reported with
 * its file and line, a missing file. */
#include "core/status.h"
#include "launcher/hosts.h"
#include "tap.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ip(struct in_addr a)
{
	static char buf[INET_ADDRSTRLEN];

	return inet_ntop(AF_INET, &a, buf, sizeof(buf));
}

int main(void)
{
	struct in_addr a = { 0 };
	char err[256] = "", path[] = "/tmp/ibc-hosts-test.XXXXXX";
	FILE *f;
	int fd;

	tap_plan_none();
	tap_is_int(ibc_launch_hosts_line("10.77.0.1 ibc-h1\n", "ibc-h1", &a, err, sizeof(err)), IBC_OK, "a line");
	tap_is_str(ip(a), "10.77.0.1", "... its address");
	tap_is_int(ibc_launch_hosts_line("127.0.0.1\tfakehost1 fakehost2", "fakehost2", &a, err, sizeof(err)), IBC_OK,
		   "the second name of a line");
	tap_is_str(ip(a), "127.0.0.1", "... its address");
	tap_is_int(ibc_launch_hosts_line("10.0.0.1 ibc-h10", "ibc-h1", &a, err, sizeof(err)), IBC_ERR_NOTFOUND,
		   "a name that only starts the same: not found");
	tap_is_int(ibc_launch_hosts_line("# 10.0.0.9 ibc-h1", "ibc-h1", &a, err, sizeof(err)), IBC_ERR_NOTFOUND,
		   "a comment: not found");
	tap_is_int(ibc_launch_hosts_line("\n", "ibc-h1", &a, err, sizeof(err)), IBC_ERR_NOTFOUND, "an empty line");
	a.s_addr = 0;
	tap_is_int(ibc_launch_hosts_line("10.77.0.300 ibc-h1", "ibc-h1", &a, err, sizeof(err)), IBC_ERR_INVAL,
		   "a bad address: refused");
	tap_is_str(err, "'10.77.0.300' of ibc-h1 is not an IPv4 address", "... saying why");
	tap_ok(a.s_addr == 0, "... and the address untouched");

	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL)
		tap_bail_out("cannot write %s", path);
	fputs("# test hosts\n127.0.0.1 localhost\nfe80::1 ibc-h2\n10.77.0.2 ibc-h2\n10.77.0.3 ibc-h3 h3\n"
	      "10.77.0.9 ibc-h3\nnot-an-ip ibc-h4\n", f);
	fclose(f);
	tap_is_int(ibc_launch_hosts_lookup(path, "h3", &a, err, sizeof(err)), IBC_OK, "file: an alias");
	tap_is_str(ip(a), "10.77.0.3", "... the first line naming it");
	tap_is_int(ibc_launch_hosts_lookup(path, "ibc-h2", &a, err, sizeof(err)), IBC_OK,
		   "file: a bad line before a good one");
	tap_is_str(ip(a), "10.77.0.2", "... the good one");
	tap_is_int(ibc_launch_hosts_lookup(path, "ibc-h5", &a, err, sizeof(err)), IBC_ERR_NOTFOUND,
		   "file: an unknown name");
	tap_is_int(ibc_launch_hosts_lookup(path, "ibc-h4", &a, err, sizeof(err)), IBC_ERR_INVAL,
		   "file: only a bad address: refused");
	tap_ok(strstr(err, " line 7: 'not-an-ip' of ibc-h4 is not an IPv4 address") != NULL &&
		       strncmp(err, path, strlen(path)) == 0,
	       "... naming the file and line (%s)", err);
	unlink(path);
	tap_is_int(ibc_launch_hosts_lookup(path, "ibc-h1", &a, err, sizeof(err)), IBC_ERR_NOTFOUND,
		   "no file: not found");

	unsetenv("IBC_HOSTS_FILE");
	tap_is_str(ibc_launch_hosts_path(), IBC_LAUNCH_HOSTS_FILE, "the default file");
	setenv("IBC_HOSTS_FILE", "", 1);
	tap_is_str(ibc_launch_hosts_path(), IBC_LAUNCH_HOSTS_FILE, "IBC_HOSTS_FILE empty: the default");
	setenv("IBC_HOSTS_FILE", "/x/hosts", 1);
	tap_is_str(ibc_launch_hosts_path(), "/x/hosts", "IBC_HOSTS_FILE");
	return tap_done();
}
