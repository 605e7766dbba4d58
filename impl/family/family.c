/* The live-instance registry and the completion router of every family
 * (family.h). */
#include "family/family.h"

#include "core/log.h"
#include "core/status.h"

struct ibc_family_slot ibc_family_live[IBC_FAMILY_MAX_LIVE];

int ibc_family_add(struct ibc_family_member *m, struct ibc_family_kind *kind,
		   ibc_family_wc_fn wc, void *owner)
{
	int i;

	for (i = 0; i < IBC_FAMILY_MAX_LIVE; i++)
		if (ibc_family_live[i].owner == NULL) {
			ibc_family_live[i].wc = wc;
			ibc_family_live[i].kind = kind;
			ibc_family_live[i].owner = owner;
			m->live = i;
			return IBC_OK;
		}
	m->live = -1;
	ibc_error("%s: more than %d live instances of every family", kind->name,
		  IBC_FAMILY_MAX_LIVE);
	return IBC_ERR_NOMEM;
}

void ibc_family_remove(struct ibc_family_member *m)
{
	/* the kind stays: a late completion is counted for the family */
	if (m->live >= 0 && m->live < IBC_FAMILY_MAX_LIVE)
		ibc_family_live[m->live].owner = NULL;
	m->live = -1;
}

static void late_log(const struct ibc_xport_wc *wc)
{
	/* e.g. a retransmitted release that reached a destroyed RGM instance's
	 * queue before it left the group */
	ibc_debug("%s: a late completion of a destroyed instance dropped",
		  ibc_family_live[(wc->wr_id >> 40) & 0xffff].kind->name);
}

int ibc_family_route(const struct ibc_xport_wc *wc, int *rc)
{
	int r = ibc_family_dispatch(wc, rc);

	if (r == 2)
		late_log(wc);
	return r != 0;
}

int ibc_family_service(struct ibc_xport *x, int cq)
{
	struct ibc_xport_wc wc[16];
	int n = 0, i, rc, first = IBC_OK;

	rc = ibc_xport_cq_poll(x, cq, 16, wc, &n);
	if (rc) {
		ibc_error("polling completions: %s", ibc_status_str(rc));
		return rc;
	}
	for (i = 0; i < n; i++) {
		switch (ibc_family_dispatch(&wc[i], &rc)) {
		case 1:
			if (rc && first == IBC_OK)
				first = rc;
			break;
		case 2:
			late_log(&wc[i]);
			break;
		default:
			ibc_warn("a completion of no instance (wr_id %#llx, %s) dropped",
				 (unsigned long long)wc[i].wr_id,
				 ibc_xport_opcode_name(wc[i].opcode));
		}
	}
	return first;
}
