/* The PMI-1 server of the node agent (launcher/agent_pmi.c: PMI-1 lines and
 * ibchar's commands with payloads): the input is what a process writes on
 * PMI_FD, given to each of the agent's FUZZ_NP processes in turn (so
 * collectives complete), then the agent is freed.  Cache policy from the
 * input's length. */
#include "fuzz.h"
#include "agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ibc_launch_agent a;
	int i, round;

	fuzz_quiet();
	fuzz_agent_init(&a, (int)(size % 4));
	for (i = 0; i < FUZZ_NP; i++)
		ibc_launch_buf_append(&a.proc[i].in, data, size);
	/* blocked processes go on when the others join: a few rounds */
	for (round = 0; round < 4; round++)
		for (i = 0; i < FUZZ_NP; i++) {
			ibc_launch_proc_input(&a, &a.proc[i]);
			ibc_launch_buf_free(&a.proc[i].out);
		}
	ibc_launch_agent_free(&a);
	return 0;
}
