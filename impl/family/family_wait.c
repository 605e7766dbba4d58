/* The wait tick of every family (family.h). */
#include "family/family.h"

#include "core/log.h"
#include "core/status.h"
#include "core/wait.h"

int ibc_family_timeout(const char *family, const char *alg, int rank, const char *unit,
		       unsigned long long seq, const char *what, int peer, double deadline_s)
{
	ibc_error("%s %s rank %d: %s %llu: no %s from rank %d after %g s", family, alg, rank, unit,
		  seq, what, peer, deadline_s);
	return IBC_ERR_TIMEOUT;
}

int ibc_family_tick(struct ibc_xport *x, struct ibc_family_waiter *w)
{
	int rc;

	ibc_wait_relax(x->wait, &w->polls);
	if (w->service_every && (w->polls & (w->service_every - 1)) == 0) {
		rc = ibc_family_service(x, IBC_XPORT_CQ_ANY);
		if (rc)
			return rc;
	}
	/* the transport's progress hooks run wherever a family waits */
	if ((w->polls & (w->progress_every - 1)) == 0) {
		rc = ibc_xport_progress(x);
		if (rc)
			return rc;
	}
	/* the clock is read rarely: every 64 polls once yielding, every 4096 spinning */
	if ((w->polls & ((x->wait == IBC_WAIT_SPIN_YIELD && w->polls > 64) ? 63 : 4095)) == 0)
		return ibc_wait_check(&w->dl);
	return IBC_OK;
}
