/* Job description encoding (job.h). */
#include "launcher/job.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

void ibc_launch_job_encode(const struct ibc_launch_job *j, struct ibc_launch_buf *b)
{
	uint32_t i;

	ibc_launch_buf_put_u32(b, j->jobid);
	ibc_launch_buf_put_u32(b, j->token);
	ibc_launch_buf_put_u32(b, j->np);
	ibc_launch_buf_put_u32(b, j->nnodes);
	ibc_launch_buf_put_u32(b, j->degree);
	ibc_launch_buf_put_u32(b, j->mode);
	ibc_launch_buf_put_u32(b, j->cache);
	ibc_launch_buf_put_u32(b, j->tag_output);
	ibc_launch_buf_put_u32(b, j->log_level);
	ibc_launch_buf_put_u64(b, j->cache_bound);
	ibc_launch_buf_put_str(b, j->self);
	ibc_launch_buf_put_str(b, j->rsh);
	ibc_launch_buf_put_str(b, j->cwd);
	for (i = 0; i < j->nnodes; i++) {
		ibc_launch_buf_put_str(b, j->hosts[i]);
		ibc_launch_buf_put_u32(b, (uint32_t)j->start[i]);
	}
	ibc_launch_buf_put_u32(b, (uint32_t)j->argc);
	for (i = 0; i < (uint32_t)j->argc; i++)
		ibc_launch_buf_put_str(b, j->argv[i]);
	ibc_launch_buf_put_u32(b, (uint32_t)j->nenv);
	for (i = 0; i < (uint32_t)j->nenv; i++)
		ibc_launch_buf_put_str(b, j->env[i]);
}

void ibc_launch_job_free(struct ibc_launch_job *j)
{
	int i;

	free(j->self);
	free(j->rsh);
	free(j->cwd);
	if (j->hosts)
		for (i = 0; i < (int)j->nnodes; i++)
			free(j->hosts[i]);
	free(j->hosts);
	free(j->start);
	if (j->argv)
		for (i = 0; i < j->argc; i++)
			free(j->argv[i]);
	free(j->argv);
	if (j->env)
		for (i = 0; i < j->nenv; i++)
			free(j->env[i]);
	free(j->env);
	memset(j, 0, sizeof(*j));
}

int ibc_launch_job_decode(const void *p, size_t len, struct ibc_launch_job *j)
{
	struct ibc_launch_rd r;
	uint32_t i, n;

	memset(j, 0, sizeof(*j));
	ibc_launch_rd_init(&r, p, len);
	j->jobid = ibc_launch_rd_u32(&r);
	j->token = ibc_launch_rd_u32(&r);
	j->np = ibc_launch_rd_u32(&r);
	j->nnodes = ibc_launch_rd_u32(&r);
	j->degree = ibc_launch_rd_u32(&r);
	j->mode = ibc_launch_rd_u32(&r);
	j->cache = ibc_launch_rd_u32(&r);
	j->tag_output = ibc_launch_rd_u32(&r);
	j->log_level = ibc_launch_rd_u32(&r);
	j->cache_bound = ibc_launch_rd_u64(&r);
	if (r.err || j->np < 1 || j->np > 1000000 || j->nnodes < 1 || j->nnodes > j->np ||
	    j->degree < 1 || j->mode > 1 || j->cache > 3)
		goto err_free_job;
	j->self = ibc_launch_rd_strdup(&r);
	j->rsh = ibc_launch_rd_strdup(&r);
	j->cwd = ibc_launch_rd_strdup(&r);
	j->hosts = calloc(j->nnodes, sizeof(*j->hosts));
	j->start = calloc(j->nnodes + 1, sizeof(*j->start));
	if (r.err || j->hosts == NULL || j->start == NULL)
		goto err_free_job;
	for (i = 0; i < j->nnodes; i++) {
		j->hosts[i] = ibc_launch_rd_strdup(&r);
		j->start[i] = (int)ibc_launch_rd_u32(&r);
		if (r.err || (i == 0 && j->start[0] != 0) || (i > 0 && j->start[i] <= j->start[i - 1]))
			goto err_free_job;
	}
	j->start[j->nnodes] = (int)j->np;
	if (j->start[j->nnodes - 1] >= (int)j->np)
		goto err_free_job;
	n = ibc_launch_rd_u32(&r);
	if (r.err || n < 1 || n > 100000)
		goto err_free_job;
	j->argv = calloc(n + 1, sizeof(*j->argv));
	if (j->argv == NULL)
		goto err_free_job;
	j->argc = (int)n;
	for (i = 0; i < n; i++)
		j->argv[i] = ibc_launch_rd_strdup(&r);
	n = ibc_launch_rd_u32(&r);
	if (r.err || n > 100000)
		goto err_free_job;
	j->env = calloc(n + 1, sizeof(*j->env));
	if (j->env == NULL)
		goto err_free_job;
	j->nenv = (int)n;
	for (i = 0; i < n; i++)
		j->env[i] = ibc_launch_rd_strdup(&r);
	if (r.err || r.pos != r.len)
		goto err_free_job;
	return IBC_OK;

err_free_job:
	ibc_launch_job_free(j);
	return IBC_ERR_PROTO;
}
