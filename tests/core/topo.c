/* Topology on this machine: counts, pinning, oversubscription, fork. */
#define _GNU_SOURCE
#include "core/log.h"
#include "core/status.h"
#include "core/topo.h"
#include "tap.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	struct ibc_topo_info ti, after;
	int rc, st = 0;
	pid_t pid;

	tap_plan_none();
	ibc_log_init("topo-test");

	rc = ibc_topo_query(&ti);
	if (!tap_is_int(rc, IBC_OK, "query"))
		tap_bail_out("hwloc topology unavailable");
	tap_diag("pus %d cores %d numa %d allowed %d bound %d binding '%s' model '%s'", ti.pus,
		 ti.cores, ti.numa_nodes, ti.allowed_pus, ti.bound, ti.binding, ti.cpu_model);
	tap_ok(ti.pus >= 1, "pus >= 1 (%d)", ti.pus);
	tap_ok(ti.cores >= 1 && ti.cores <= ti.pus, "1 <= cores (%d) <= pus", ti.cores);
	tap_ok(ti.numa_nodes >= 1, "numa nodes >= 1 (%d)", ti.numa_nodes);
	tap_ok(ti.allowed_pus >= 1 && ti.allowed_pus <= ti.pus, "1 <= allowed pus (%d) <= pus",
	       ti.allowed_pus);
	tap_is_int(ti.pus, sysconf(_SC_NPROCESSORS_ONLN), "pus match the online CPUs");
	tap_ok(ti.binding[0] != '\0', "binding reported: '%s'", ti.binding);
	tap_ok(ti.cpu_model[0] != '\0', "cpu model reported: '%s'", ti.cpu_model);
	if (ti.allowed_pus > 1)
		tap_is_int(ibc_topo_bound_pu(), -1, "bound PU: none while several are allowed");
	else
		tap_is_int(ibc_topo_bound_pu(), sched_getcpu(), "bound PU: the only one, where it runs");

	rc = ibc_topo_pin(0);
	if (rc == IBC_ERR_UNSUPPORTED) {
		tap_skip(9, "binding not supported here");
	} else {
		tap_is_int(rc, IBC_OK, "pin to PU 0");
		ibc_topo_query(&after);
		tap_is_str(after.binding, "0", "binding after pinning to PU 0");
		tap_is_int(sched_getcpu(), 0, "the kernel agrees: it runs on CPU 0");
		tap_is_int(ibc_topo_bound_pu(), 0, "bound PU after pinning to PU 0");
		tap_is_int(after.bound, ti.allowed_pus > 1, "bound flag set when narrower than allowed");
		tap_is_int(after.allowed_pus, ti.allowed_pus, "pinning does not shrink allowed PUs");
		ibc_topo_pin(ti.allowed_pus); /* wraps modulo the allowed PUs */
		ibc_topo_query(&after);
		tap_is_str(after.binding, "0", "pin index wraps modulo the allowed PUs");
		if (ti.allowed_pus > 1) {
			ibc_topo_pin(1);
			ibc_topo_query(&after);
			tap_is_str(after.binding, "1", "pin to PU 1 (this machine: P#1)");
			tap_is_int(ibc_topo_bound_pu(), 1, "bound PU after pinning to PU 1");
		} else {
			tap_skip(2, "only one PU allowed");
		}
	}
	ibc_log_level_set(IBC_LOG_NONE);
	tap_is_int(ibc_topo_pin(-1), IBC_ERR_INVAL, "negative PU index rejected");
	ibc_log_level_set(IBC_LOG_WARN);

	tap_is_int(ibc_topo_oversubscribed(ti.pus + 1), 1, "pus + 1 ranks oversubscribe");
	tap_is_int(ibc_topo_oversubscribed(1), 0, "one rank does not oversubscribe");
	tap_is_int(ibc_topo_oversubscribed(ti.allowed_pus), 0, "allowed_pus ranks fit");

	/* the cached topology is usable (reloaded) in a forked child */
	pid = fork();
	if (pid == 0) {
		struct ibc_topo_info ci;

		if (ibc_topo_query(&ci) != IBC_OK || ci.pus != ti.pus || ci.cores != ti.cores)
			_exit(1);
		if (ibc_topo_pin(0) != IBC_OK || ibc_topo_query(&ci) != IBC_OK ||
		    strcmp(ci.binding, "0") != 0)
			_exit(2);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	tap_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "query and pin work in a forked child (status %d)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);

	return tap_done();
}
