/* The XRC connection plan (verbs_xrc.c), as pure arithmetic that needs no
 * device, so it is unit-tested everywhere (tests/xport/xrc_plan.c) although
 * few devices (not rxe) have XRC:
 *   - every rank's node and SRQ number, from what each rank announced;
 *   - the node leader (its lowest rank, the one that makes the node's
 *     target QPs);
 *   - the initiator QPs a process needs: one per node it talks to (the
 *     thesis' n connections per process, Table 4.1);
 *   - the route to a peer: its node's initiator, addressed to its SRQ. */
#ifndef IBC_XRC_PLAN_H
#define IBC_XRC_PLAN_H

#include <stdint.h>

struct ibc_xrc_plan {
	int n;             /* ranks */
	int nnodes;        /* 1 + the largest node id */
	int *node_of;      /* [n] */
	uint32_t *srqn_of; /* [n] */
	int *leader_of;    /* [nnodes]: lowest rank on the node, -1 for an empty id */
	uint8_t *need_ini; /* [nnodes]: 1 when a wanted peer lives there */
};

/* node_ids[r], srqns[r]: what rank r announced; want[r] != 0: this process
 * talks to r (want[self] is ignored).  IBC_ERR_INVAL on a node id < 0 or
 * >= n, IBC_ERR_NOMEM.  Free with ibc_xrc_plan_free. */
int ibc_xrc_plan_build(struct ibc_xrc_plan *p, int n, int self, const int *node_ids,
		       const uint32_t *srqns, const uint8_t *want);
void ibc_xrc_plan_free(struct ibc_xrc_plan *p);
/* How many initiator QPs the process needs. */
int ibc_xrc_plan_initiators(const struct ibc_xrc_plan *p);
/* The node whose initiator reaches peer, and the SRQ number to name. */
int ibc_xrc_plan_route(const struct ibc_xrc_plan *p, int peer, int *node, uint32_t *srqn);

#endif
