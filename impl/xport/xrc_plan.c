/* The XRC connection plan (xrc_plan.h). */
#include "xport/xrc_plan.h"

#include "core/status.h"

#include <stdlib.h>
#include <string.h>

void ibc_xrc_plan_free(struct ibc_xrc_plan *p)
{
	free(p->node_of);
	free(p->srqn_of);
	free(p->leader_of);
	free(p->need_ini);
	memset(p, 0, sizeof(*p));
}

int ibc_xrc_plan_build(struct ibc_xrc_plan *p, int n, int self, const int *node_ids,
		       const uint32_t *srqns, const uint8_t *want)
{
	int r;

	memset(p, 0, sizeof(*p));
	if (n < 1 || self < 0 || self >= n)
		return IBC_ERR_INVAL;
	for (r = 0; r < n; r++)
		if (node_ids[r] < 0 || node_ids[r] >= n)
			return IBC_ERR_INVAL;
		else if (node_ids[r] + 1 > p->nnodes)
			p->nnodes = node_ids[r] + 1;
	p->n = n;
	p->node_of = calloc((size_t)n, sizeof(int));
	p->srqn_of = calloc((size_t)n, sizeof(uint32_t));
	p->leader_of = malloc((size_t)p->nnodes * sizeof(int));
	p->need_ini = calloc((size_t)p->nnodes, 1);
	if (!p->node_of || !p->srqn_of || !p->leader_of || !p->need_ini) {
		ibc_xrc_plan_free(p);
		return IBC_ERR_NOMEM;
	}
	for (r = 0; r < p->nnodes; r++)
		p->leader_of[r] = -1;
	for (r = 0; r < n; r++) {
		int node = node_ids[r];

		p->node_of[r] = node;
		p->srqn_of[r] = srqns[r];
		if (p->leader_of[node] < 0)
			p->leader_of[node] = r;   /* ranks in order: the lowest first */
		if (r != self && want != NULL && want[r])
			p->need_ini[node] = 1;
	}
	return IBC_OK;
}

int ibc_xrc_plan_initiators(const struct ibc_xrc_plan *p)
{
	int node, k = 0;

	for (node = 0; node < p->nnodes; node++)
		k += p->need_ini[node];
	return k;
}

int ibc_xrc_plan_route(const struct ibc_xrc_plan *p, int peer, int *node, uint32_t *srqn)
{
	if (peer < 0 || peer >= p->n || !p->need_ini[p->node_of[peer]])
		return IBC_ERR_INVAL;
	*node = p->node_of[peer];
	*srqn = p->srqn_of[peer];
	return IBC_OK;
}
