/* The test-hosts file that scripts/testhosts writes: /etc/hosts format,
 * "ADDRESS NAME..." a line, '#' starts a comment line.  The launcher
 * resolves host names in it before DNS (launcher.c), and so does the launch
 * suite (impl/launch/lsuite.c). */
#ifndef IBC_LAUNCH_HOSTS_H
#define IBC_LAUNCH_HOSTS_H

#include <netinet/in.h>
#include <stddef.h>

#define IBC_LAUNCH_HOSTS_FILE "/run/ibchar/testhosts.hosts"

/* The file to read: $IBC_HOSTS_FILE when set and not empty, else the default. */
const char *ibc_launch_hosts_path(void);
/* One line: IBC_OK and *out when name is on it with an IPv4 address,
 * IBC_ERR_NOTFOUND when it is not on it (or the line is a comment or empty),
 * IBC_ERR_INVAL when it is but the address is not IPv4 (err says so). */
int ibc_launch_hosts_line(const char *line, const char *name, struct in_addr *out, char *err, size_t errlen);
/* The first line of the file at path naming name with an IPv4 address.
 * IBC_ERR_NOTFOUND when the file cannot be read or does not name it;
 * IBC_ERR_INVAL when it names it only with bad addresses (err: path, line). */
int ibc_launch_hosts_lookup(const char *path, const char *name, struct in_addr *out, char *err, size_t errlen);

#endif
