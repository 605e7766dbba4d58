/* perftest's ib_write_lat / ib_write_bw as a reference pair (perftest.h). */
#include "link/perftest.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Starts argv with stdin on /dev/null and stdout/stderr on out_fd (or
 * /dev/null); -1 when it cannot start (*status as for a child whose exec
 * failed: exit code 127). */
static pid_t spawn(char *const argv[], int out_fd, int *status)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDWR, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd >= 0 ? out_fd : STDIN_FILENO, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out_fd >= 0 ? out_fd : STDIN_FILENO, STDERR_FILENO);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0) {
		*status = 127 << 8;
		return -1;
	}
	return pid;
}

/* 1 when a TCP socket listens on port (perftest's server is up) */
static int port_listening(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512];

	for (size_t k = 0; k < 2; k++) {
		FILE *f = fopen(files[k], "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			char *colon = strchr(line, ':');
			unsigned lport, st;
			/* "  0: 00000000:4E20 00000000:0000 0A ..." */
			if (colon == NULL || (colon = strchr(colon + 1, ':')) == NULL)
				continue;
			if (sscanf(colon + 1, "%x %*s %x", &lport, &st) == 2 && (int)lport == port &&
			    st == 0x0A) {
				fclose(f);
				return 1;
			}
		}
		fclose(f);
	}
	return 0;
}

static int sample_add(struct ibc_link_perftest_result *res, double us)
{
	if (res->n == res->cap) {
		long ncap = res->cap ? res->cap * 2 : 1024;
		double *n = realloc(res->us, (size_t)ncap * sizeof(*n));
		if (n == NULL)
			return IBC_ERR_NOMEM;
		res->us = n;
		res->cap = ncap;
	}
	res->us[res->n++] = us;
	return IBC_OK;
}

int ibc_link_perftest_parse(FILE *f, enum ibc_link_perftest_tool tool, size_t bytes,
			    struct ibc_link_perftest_result *res)
{
	int bw = tool == IBC_LINK_PERFTEST_WRITE_BW;
	char line[512];
	int in_samples = 0, after_hdr = 0;

	res->last_line[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] != '\n' && strncmp(line, "----", 4) != 0) {
			line[strcspn(line, "\n")] = '\0';
			line[sizeof(res->last_line) - 1] = '\0';
			memcpy(res->last_line, line, strlen(line) + 1);
		}
		if (strncmp(line, "Correlation coefficient", 23) == 0)
			res->clock_bad = 1;
		long i;
		double v, peak, avg;
		unsigned long b, it;
		if (!bw) {
			if (strncmp(line, "#, usec", 7) == 0) {
				in_samples = 1;
				continue;
			}
			if (in_samples && sscanf(line, "%ld, %lf", &i, &v) == 2) {
				if (sample_add(res, v) != IBC_OK)
					return IBC_ERR_NOMEM;
				continue;
			}
			in_samples = 0;
		} else {
			if (strstr(line, "#bytes") != NULL) {
				after_hdr = 1;
				continue;
			}
			if (after_hdr && sscanf(line, " %lu %lu %lf %lf", &b, &it, &peak, &avg) == 4 &&
			    b == bytes) {
				res->mbps = avg;
				after_hdr = 0;
			}
		}
	}
	return IBC_OK;
}

/* rank 1: the server, once it listens (or -1) */
static pid_t server_start(char *argv[], const char *tool, int port)
{
	int status, i;
	pid_t pid = spawn(argv, -1, &status);

	for (i = 0; i < 300 && pid > 0 && !port_listening(port); i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (pid <= 0 || i == 300)
		ibc_info("link: %s server did not start listening on port %d", tool, port);
	return pid;
}

/* the client is done: the server ends with it, or is stopped */
static void server_stop(pid_t pid)
{
	int status;

	for (int i = 0; i < 50; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		if (waitpid(pid, &status, WNOHANG) == pid)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* rank 0: the client into a temporary file, then its output parsed */
static int client_run(char *argv[], const struct ibc_link_perftest_args *a,
		      struct ibc_link_perftest_result *res)
{
	const char *tool = argv[0];
	char tmpl[] = "/tmp/ibchar-perftest-XXXXXX";
	int fd = mkstemp(tmpl), rc = IBC_OK, status = 0;
	pid_t pid;

	if (fd < 0)
		return IBC_ERR_SYS;
	unlink(tmpl);
	pid = spawn(argv, fd, &status);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		char last[256] = "";
		FILE *f = fdopen(dup(fd), "r");
		if (f != NULL) {
			char line[256];
			rewind(f);
			while (fgets(line, sizeof(line), f) != NULL)
				if (line[0] != '\n')
					snprintf(last, sizeof(last), "%s", line);
			fclose(f);
		}
		last[strcspn(last, "\n")] = '\0';
		/* a missing tool (127) is an expected skip, anything else is news */
		if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
			ibc_info("link: %s not runnable: no perftest rows", tool);
			rc = IBC_ERR_NOTFOUND;
		} else {
			ibc_warn("link: %s client failed (status %d, last words: '%s')", tool,
				 status, last);
			rc = IBC_ERR_UNSUPPORTED;
		}
	} else {
		FILE *f = fdopen(fd, "r");
		if (f == NULL) {
			rc = IBC_ERR_SYS;
		} else {
			rewind(f);
			rc = ibc_link_perftest_parse(f, a->tool, a->bytes, res);
			fclose(f);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int ibc_link_perftest_run(struct ibc_boot *boot, const struct ibc_link_perftest_args *a,
			  struct ibc_link_perftest_result *res)
{
	int bw = a->tool == IBC_LINK_PERFTEST_WRITE_BW;
	char dev[256], *colon, s_bytes[32], s_iters[32], s_port[16], s_ib[16], s_gid[16],
		s_win[16];
	const char *tool = bw ? "ib_write_bw" : "ib_write_lat";
	char *argv[24];
	int n = 0, rc;
	pid_t server = -1;

	snprintf(dev, sizeof(dev), "%s", a->device);
	colon = strchr(dev, ':');
	snprintf(s_ib, sizeof(s_ib), "%s", colon != NULL ? colon + 1 : "1");
	if (colon != NULL)
		*colon = '\0';
	snprintf(s_bytes, sizeof(s_bytes), "%zu", a->bytes);
	snprintf(s_iters, sizeof(s_iters), "%ld", a->iters < 5 ? 5 : a->iters);
	snprintf(s_port, sizeof(s_port), "%d", a->tcp_port);
	snprintf(s_gid, sizeof(s_gid), "%d", a->gid_index);
	snprintf(s_win, sizeof(s_win), "%ld", a->window);
	argv[n++] = (char *)tool;
	argv[n++] = "-d";
	argv[n++] = dev;
	argv[n++] = "-i";
	argv[n++] = s_ib;
	argv[n++] = "-s";
	argv[n++] = s_bytes;
	argv[n++] = "-n";
	argv[n++] = s_iters;
	argv[n++] = "-p";
	argv[n++] = s_port;
	argv[n++] = "-F";
	if (a->gid_index >= 0) {
		argv[n++] = "-x";
		argv[n++] = s_gid;
	}
	if (bw) {
		argv[n++] = "-t";
		argv[n++] = s_win;
	} else {
		argv[n++] = "-U";
	}
	argv[n] = NULL;
	if (boot->rank == 1)
		server = server_start(argv, tool, a->tcp_port);
	rc = ibc_boot_barrier(boot);
	if (rc == IBC_OK && boot->rank == 0) {
		argv[n++] = "127.0.0.1";
		argv[n] = NULL;
		rc = client_run(argv, a, res);
	}
	if (ibc_boot_barrier(boot) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_CLOSED;
	if (server > 0)
		server_stop(server);
	return rc;
}

void ibc_link_perftest_result_reset(struct ibc_link_perftest_result *res)
{
	res->n = 0;
	res->mbps = 0;
	res->last_line[0] = '\0';
	res->clock_bad = 0;
}

void ibc_link_perftest_result_free(struct ibc_link_perftest_result *res)
{
	free(res->us);
	res->us = NULL;
	res->n = res->cap = 0;
}
