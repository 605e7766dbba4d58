/* impl/xport/xrc_plan: the XRC connection plan without a device, for n nodes
 * x c ranks (blocked and round-robin placements, node ids with gaps):
 * initiators per process = nodes talked to (Table 4.1's n, against RC's
 * n c - 1), the route to every peer is its node's initiator and its own SRQ,
 * the leader is the node's lowest rank; bad node ids are refused. */
#include "core/status.h"
#include "xport/xrc_plan.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_layout(int nodes, int cores, int roundrobin, int gap)
{
	int n = nodes * cores, self, r, ok = 1, ids[256];
	uint32_t srqn[256];
	uint8_t want[256];
	char why[160] = "";

	for (r = 0; r < n; r++) {
		int node = roundrobin ? r % nodes : r / cores;

		ids[r] = node * gap;      /* gap > 1: ids with holes */
		srqn[r] = 1000u + (uint32_t)r * 7u;
		want[r] = 1;
	}
	for (self = 0; self < n && ok; self++) {
		struct ibc_xrc_plan p;
		int k, lowest;

		if (ibc_xrc_plan_build(&p, n, self, ids, srqn, want) != IBC_OK) {
			snprintf(why, sizeof(why), "rank %d: no plan", self);
			ok = 0;
			break;
		}
		/* every node but an only-self one is talked to */
		k = ibc_xrc_plan_initiators(&p);
		if (k != (cores > 1 ? nodes : nodes - 1)) {
			snprintf(why, sizeof(why), "rank %d: %d initiators", self, k);
			ok = 0;
		}
		for (r = 0; r < n && ok; r++) {
			int node = -1;
			uint32_t s = 0;

			if (r == self)
				continue;
			if (ibc_xrc_plan_route(&p, r, &node, &s) != IBC_OK || node != ids[r] ||
			    s != srqn[r]) {
				snprintf(why, sizeof(why), "rank %d -> %d: node %d srqn %u", self, r,
					 node, s);
				ok = 0;
			}
		}
		for (k = 0; k < p.nnodes && ok; k++) {
			for (lowest = -1, r = 0; r < n && lowest < 0; r++)
				if (ids[r] == k)
					lowest = r;
			if (p.leader_of[k] != lowest) {
				snprintf(why, sizeof(why), "node %d: leader %d, not %d", k,
					 p.leader_of[k], lowest);
				ok = 0;
			}
		}
		ibc_xrc_plan_free(&p);
	}
	if (!ok)
		tap_diag("%s", why);
	tap_ok(ok, "XRC plan, %d nodes x %d ranks%s%s: %d initiators per process against %d RC "
	       "QPs; every peer routed to its node and SRQ", nodes, cores,
	       roundrobin ? ", round-robin" : "", gap > 1 ? ", node ids with gaps" : "",
	       cores > 1 ? nodes : nodes - 1, n - 1);
}

int main(void)
{
	static const int layouts[][2] = { { 1, 1 }, { 1, 4 }, { 2, 1 }, { 2, 2 }, { 3, 5 },
					  { 4, 8 }, { 8, 16 }, { 16, 16 } };
	struct ibc_xrc_plan p;
	int ids[3] = { 0, 5, 1 };
	uint32_t srqn[3] = { 1, 2, 3 };
	uint8_t want[3] = { 1, 1, 1 }, only[4] = { 0, 1, 0, 0 };
	int ids4[4] = { 0, 0, 1, 1 };
	uint32_t srqn4[4] = { 1, 2, 3, 4 };
	size_t i;

	tap_plan_none();
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		check_layout(layouts[i][0], layouts[i][1], 0, 1);
		check_layout(layouts[i][0], layouts[i][1], 1, 1);
	}
	check_layout(3, 2, 0, 2);
	tap_is_int(ibc_xrc_plan_build(&p, 3, 0, ids, srqn, want), IBC_ERR_INVAL,
		   "a node id beyond the ranks is refused");
	ids[1] = -1;
	tap_is_int(ibc_xrc_plan_build(&p, 3, 0, ids, srqn, want), IBC_ERR_INVAL,
		   "a negative node id is refused");
	/* on demand: only the peers wanted need an initiator */
	tap_is_int(ibc_xrc_plan_build(&p, 4, 0, ids4, srqn4, only), IBC_OK, "a plan for one peer");
	tap_ok(ibc_xrc_plan_initiators(&p) == 1 && p.need_ini[0] && !p.need_ini[1],
	       "... one initiator, to the wanted peer's node");
	{
		int node;
		uint32_t s;

		tap_is_int(ibc_xrc_plan_route(&p, 2, &node, &s), IBC_ERR_INVAL,
			   "... a peer on a node not talked to has no route");
	}
	ibc_xrc_plan_free(&p);
	return tap_done();
}
