/* The test-hosts file: see hosts.h. */
#include "launcher/hosts.h"
#include "core/status.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ibc_launch_hosts_path(void)
{
	const char *path = getenv("IBC_HOSTS_FILE");

	return path != NULL && *path ? path : IBC_LAUNCH_HOSTS_FILE;
}

int ibc_launch_hosts_line(const char *line, const char *name, struct in_addr *out, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *addr, *n;
	struct in_addr a;

	snprintf(buf, sizeof(buf), "%s", line);
	addr = strtok_r(buf, " \t\r\n", &save);
	if (addr == NULL || addr[0] == '#')
		return IBC_ERR_NOTFOUND;
	while ((n = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
		if (strcmp(n, name) != 0)
			continue;
		if (inet_pton(AF_INET, addr, &a) == 1) {
			*out = a;
			return IBC_OK;
		}
		snprintf(err, errlen, "'%s' of %s is not an IPv4 address", addr, name);
		return IBC_ERR_INVAL;
	}
	return IBC_ERR_NOTFOUND;
}

int ibc_launch_hosts_lookup(const char *path, const char *name, struct in_addr *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[512], why[256];
	int rc = IBC_ERR_NOTFOUND, lineno = 0;

	if (f == NULL)
		return IBC_ERR_NOTFOUND;
	while (fgets(line, sizeof(line), f) != NULL) {
		int r = ibc_launch_hosts_line(line, name, out, why, sizeof(why));

		lineno++;
		if (r == IBC_OK) {
			rc = IBC_OK;
			break;
		}
		if (r == IBC_ERR_INVAL && rc == IBC_ERR_NOTFOUND) {
			/* a later line may still name it well */
			snprintf(err, errlen, "%s line %d: %s", path, lineno, why);
			rc = IBC_ERR_INVAL;
		}
	}
	fclose(f);
	return rc;
}
