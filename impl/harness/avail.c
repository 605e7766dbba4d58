/* What can run on this machine: transports and MPIs (for `ibchar list`
 * and for choosing the suites `ibchar run` runs by default). */
#include "harness/avail.h"
#include "core/log.h"
#include "core/status.h"

#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ibc_harness_avail_verbs(char *buf, size_t cap)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int n = 0, i, found = 0;
	size_t used = 0;
	uint8_t port;

	if (cap > 0)
		buf[0] = '\0';
	list = ibv_get_device_list(&n);
	if (list == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		ctx = ibv_open_device(list[i]);
		if (ctx == NULL)
			continue;
		if (ibv_query_device(ctx, &da) == 0) {
			for (port = 1; port <= da.phys_port_cnt; port++) {
				if (ibv_query_port(ctx, port, &pa) != 0 || pa.state != IBV_PORT_ACTIVE)
					continue;
				found++;
				if (used < cap) {
					int w = snprintf(buf + used, cap - used, "%s%s:%u",
							 used ? "," : "", ibv_get_device_name(list[i]),
							 (unsigned)port);
					if (w > 0)
						used += (size_t)w;
				}
			}
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return found;
}

int ibc_harness_avail_program(const char *name, char *path, size_t cap)
{
	const char *env = getenv("PATH");
	const char *p, *end;
	size_t len;

	if (name == NULL || name[0] == '\0')
		return 0;
	if (strchr(name, '/') != NULL) {
		snprintf(path, cap, "%s", name);
		return access(path, X_OK) == 0;
	}
	for (p = env != NULL ? env : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		snprintf(path, cap, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", name);
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
}
