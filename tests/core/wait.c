/* The wait strategy: names, parsing, the IBCHAR_WAIT override, the decision
 * from the topology, that relaxing counts polls, and the wait loop. */
#include "core/status.h"
#include "core/topo.h"
#include "core/wait.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>

static int progress_calls;

static int progress_fails(void *arg)
{
	(void)arg;
	return ++progress_calls == 3 ? IBC_ERR_REMOTE : IBC_OK;
}

int main(void)
{
	uint64_t word = 5, seen = 0;
	struct ibc_topo_info t;
	enum ibc_wait w = IBC_WAIT_SPIN;
	unsigned long polls = 0;

	tap_plan(14);
	tap_is_str(ibc_wait_name(IBC_WAIT_SPIN), "spin", "name of spin");
	tap_is_str(ibc_wait_name(IBC_WAIT_SPIN_YIELD), "spin-yield", "name of spin-yield");
	tap_ok(ibc_wait_parse("spin-yield", &w) == IBC_OK && w == IBC_WAIT_SPIN_YIELD,
	       "parse spin-yield");
	tap_ok(ibc_wait_parse("spin", &w) == IBC_OK && w == IBC_WAIT_SPIN, "parse spin");
	tap_ok(ibc_wait_parse("spin_yield", &w) == IBC_OK && w == IBC_WAIT_SPIN_YIELD,
	       "parse spin_yield (alias)");
	tap_is_int(ibc_wait_parse("sleep", &w), IBC_ERR_INVAL, "unknown name rejected");
	tap_is_int(ibc_wait_parse(NULL, &w), IBC_ERR_INVAL, "NULL rejected");

	unsetenv("IBCHAR_WAIT");
	tap_ok(ibc_topo_query(&t) == IBC_OK, "topology");
	tap_is_int(ibc_wait_decide(t.allowed_pus + 1), IBC_WAIT_SPIN_YIELD,
		   "more ranks than PUs: spin-yield");
	setenv("IBCHAR_WAIT", "spin", 1);
	tap_is_int(ibc_wait_decide(t.allowed_pus + 1), IBC_WAIT_SPIN, "IBCHAR_WAIT=spin wins");
	unsetenv("IBCHAR_WAIT");

	for (int i = 0; i < 2 * IBC_WAIT_SPIN_POLLS; i++)
		ibc_wait_relax(IBC_WAIT_SPIN_YIELD, &polls);
	tap_is_int((long long)polls, 2 * IBC_WAIT_SPIN_POLLS, "relax counts every poll");

	tap_ok(ibc_wait_u64(&word, 5, IBC_WAIT_SPIN, 0, NULL, NULL, &seen) == IBC_OK && seen == 5,
	       "wait_u64 returns at once when the value is reached");
	seen = 0;
	tap_ok(ibc_wait_u64(&word, 6, IBC_WAIT_SPIN_YIELD, 2000000, NULL, NULL, &seen) ==
		       IBC_ERR_TIMEOUT && seen == 5,
	       "wait_u64 times out on an unreached target and reports the last value");
	tap_ok(ibc_wait_u64(&word, 6, IBC_WAIT_SPIN, -1, progress_fails, NULL, NULL) ==
		       IBC_ERR_REMOTE && progress_calls == 3,
	       "a failing progress call ends the wait with its status");
	return tap_done();
}
