/* The launcher's tree wire protocol, the receiving agent's side
 * (launcher/wire.c frame headers, job.c's JOB payload, agent_loop.c's frame
 * handlers and the sections they call): the input is a stream of frames,
 * each preceded by one byte saying which link it came from (even: the
 * parent, odd: the child), given to node agent 1 of a small tree job; a JOB
 * frame's payload is decoded as a job description.  Cache policy from the
 * input's length. */
#include "fuzz.h"
#include "agent.h"
#include "launcher/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ibc_launch_agent a;
	size_t off = 0;

	fuzz_quiet();
	fuzz_agent_nla_init(&a, (int)(size % 4));
	while (off + 1 < size && !a.terminating) {
		struct ibc_launch_conn *c = data[off] & 1 ? &a.child[0] : &a.parent;
		struct ibc_launch_hdr h;

		off++;
		if (ibc_launch_hdr_decode(data + off, size - off, IBC_LAUNCH_WIRE_MAX, &h) != 0)
			break; /* a bad or a cut frame: the link would be dropped */
		if (h.type == IBC_LAUNCH_MSG_JOB) {
			struct ibc_launch_job j;

			if (ibc_launch_job_decode(data + off + IBC_LAUNCH_WIRE_HDR, h.len, &j) == 0)
				ibc_launch_job_free(&j);
		} else {
			ibc_launch_agent_frame(&a, c, &h, data + off + IBC_LAUNCH_WIRE_HDR);
		}
		off += IBC_LAUNCH_WIRE_HDR + h.len;
	}
	ibc_launch_buf_free(&a.proc[0].out);
	ibc_launch_agent_free(&a);
	return 0;
}
