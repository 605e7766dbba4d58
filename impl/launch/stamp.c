/* The launch suite's time stamps: see stamp.h. */
#include "launch/stamp.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t ibc_launch_stamp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int ibc_launch_stamp_write(const char *path, const struct ibc_launch_stamp *s)
{
	char line[96 + IBC_LAUNCH_STAMP_STAGES * 24];
	size_t used;
	ssize_t w;
	int fd, i;

	used = (size_t)snprintf(line, sizeof(line), "%d %d %" PRId64 " %" PRId64 " %" PRId64 " %d",
				s->rank, s->size, s->t_start, s->t_init, s->t_end, s->nstages);
	for (i = 0; i < s->nstages && i < IBC_LAUNCH_STAMP_STAGES; i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, " %" PRId64, s->stage[i]);
	used += (size_t)snprintf(line + used, sizeof(line) - used, "\n");
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return IBC_ERR_SYS;
	do
		w = write(fd, line, used);
	while (w < 0 && errno == EINTR);
	close(fd);
	return w == (ssize_t)used ? IBC_OK : IBC_ERR_SYS;
}

static int parse_line(char *line, struct ibc_launch_stamp *s)
{
	char *p = line, *end;
	long long v[6];
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < 6; i++) {
		errno = 0;
		v[i] = strtoll(p, &end, 10);
		if (end == p || errno != 0)
			return IBC_ERR_PROTO;
		p = end;
	}
	if (v[5] < 0 || v[5] > IBC_LAUNCH_STAMP_STAGES)
		return IBC_ERR_PROTO;
	s->rank = (int)v[0];
	s->size = (int)v[1];
	s->t_start = v[2];
	s->t_init = v[3];
	s->t_end = v[4];
	s->nstages = (int)v[5];
	for (i = 0; i < s->nstages; i++) {
		errno = 0;
		s->stage[i] = strtoll(p, &end, 10);
		if (end == p || errno != 0)
			return IBC_ERR_PROTO;
		p = end;
	}
	while (*p == ' ' || *p == '\n')
		p++;
	return *p == '\0' ? IBC_OK : IBC_ERR_PROTO;
}

int ibc_launch_stamps_read(const char *path, struct ibc_launch_stamp **out, size_t *n)
{
	char line[96 + IBC_LAUNCH_STAMP_STAGES * 24];
	struct ibc_launch_stamp *v = NULL, *nv;
	size_t cap = 0, k = 0;
	FILE *f = fopen(path, "r");

	*out = NULL;
	*n = 0;
	if (f == NULL)
		return errno == ENOENT ? IBC_OK : IBC_ERR_SYS;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (k == cap) {
			cap = cap ? 2 * cap : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL) {
				free(v);
				fclose(f);
				return IBC_ERR_NOMEM;
			}
			v = nv;
		}
		if (parse_line(line, &v[k]) != IBC_OK) {
			free(v);
			fclose(f);
			return IBC_ERR_PROTO;
		}
		k++;
	}
	fclose(f);
	*out = v;
	*n = k;
	return IBC_OK;
}

static int env_int(const char *const *names, int dflt)
{
	const char *e;

	for (; *names != NULL; names++)
		if ((e = getenv(*names)) != NULL && e[0] != '\0')
			return atoi(e);
	return dflt;
}

void ibc_launch_stamp_env_rank(int *rank, int *size)
{
	static const char *const r[] = { "PMI_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", NULL };
	static const char *const s[] = { "PMI_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", NULL };

	*rank = env_int(r, -1);
	*size = env_int(s, -1);
}
