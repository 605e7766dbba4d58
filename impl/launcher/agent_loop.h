/* Internal interface between the agent core (agent.c), the launcher and the
 * NLA/proxy entry points (launcher.c). */
#ifndef IBC_LAUNCH_AGENT_LOOP_H
#define IBC_LAUNCH_AGENT_LOOP_H

#include "launcher/agent.h"

double ibc_launch_now(void);
void ibc_launch_fd_nonblock(int fd);
void ibc_launch_fd_cloexec(int fd);
void ibc_launch_fail(struct ibc_launch_agent *a, int rank, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ibc_launch_terminate(struct ibc_launch_agent *a);
int ibc_launch_status_code(int status);
/* argv for running cmd on host through the remote shell (malloc'd, NULL-terminated). */
int ibc_launch_rsh_argv(const char *rsh, const char *host, char *const *cmd, char ***out);
/* Sets up children, local processes and signal handling, then runs the loop
 * until the job (or this agent's part of it) is over. */
int ibc_launch_agent_run(struct ibc_launch_agent *a);
void ibc_launch_agent_free(struct ibc_launch_agent *a);
/* Sets the rank's environment in the current (forked) process. */
void ibc_launch_proc_env(const struct ibc_launch_job *j, int rank, int fd);

#endif
