/* The remote shell that starts a node agent (or an mpirun's daemon) on a
 * host: "local" (nothing in front: every host is this machine), "ssh"
 * (BatchMode ssh, the command as one quoted string) or a template whose
 * words name the host as {host}, e.g. "ip netns exec {host}".  Used by the
 * node agents (agent_spawn.c) and by the launch suite's wrapper for the
 * mpiruns (impl/launch/lsuite.c). */
#ifndef IBC_LAUNCH_RSH_H
#define IBC_LAUNCH_RSH_H

#include <stddef.h>

/* IBC_OK when rsh is local, ssh or a template with {host}; else
 * IBC_ERR_INVAL and a message in err ("--rsh '...' is neither ..."). */
int ibc_launch_rsh_check(const char *rsh, char *err, size_t errlen);
/* text with every {host} replaced by host, malloc'd in *out.  IBC_ERR_INVAL
 * (and *out NULL) for a NULL text or host, IBC_ERR_NOMEM. */
int ibc_launch_rsh_subst(const char *text, const char *host, char **out);
/* argv for running cmd on host through the remote shell (malloc'd,
 * NULL-terminated; free each string, then the array). */
int ibc_launch_rsh_argv(const char *rsh, const char *host, char *const *cmd, char ***out);

#endif
