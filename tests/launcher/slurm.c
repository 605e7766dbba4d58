/* ibchar-launch inside a Slurm allocation: SLURM_TASKS_PER_NODE's format,
 * and that outside an allocation nothing changes. */
#include "core/status.h"
#include "launcher/slurm.h"
#include "tap.h"

#include <stdlib.h>

int main(void)
{
	int s[8], n;
	char *hosts = NULL;

	tap_plan_none();
	n = ibc_launch_slurm_tasks_parse("2(x3),1", s, 8);
	tap_ok(n == 4 && s[0] == 2 && s[1] == 2 && s[2] == 2 && s[3] == 1, "2(x3),1: 2, 2, 2, 1");
	n = ibc_launch_slurm_tasks_parse("16", s, 8);
	tap_ok(n == 1 && s[0] == 16, "16: one node of 16");
	n = ibc_launch_slurm_tasks_parse("1,4(x2)", s, 8);
	tap_ok(n == 3 && s[0] == 1 && s[1] == 4 && s[2] == 4, "1,4(x2): 1, 4, 4");
	tap_is_int(ibc_launch_slurm_tasks_parse("3(x9)", s, 8), IBC_ERR_NOMEM, "more nodes than room");
	tap_is_int(ibc_launch_slurm_tasks_parse("", s, 8), IBC_ERR_INVAL, "empty: refused");
	tap_is_int(ibc_launch_slurm_tasks_parse("2(3)", s, 8), IBC_ERR_INVAL, "2(3): refused");
	tap_is_int(ibc_launch_slurm_tasks_parse("0", s, 8), IBC_ERR_INVAL, "0 tasks: refused");
	tap_is_int(ibc_launch_slurm_tasks_parse("2,x", s, 8), IBC_ERR_INVAL, "2,x: refused");
	unsetenv("SLURM_JOB_NODELIST");
	tap_is_int(ibc_launch_slurm_hosts(&hosts), IBC_ERR_NOTFOUND, "outside an allocation: not found");
	tap_ok(hosts == NULL, "... and no hosts");
	return tap_done();
}
