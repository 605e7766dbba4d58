/* The node agent's process protocol: a local process's PMI-1 and ibchar
 * command lines on its PMI_FD socket, parsed and answered. */
#include "launcher/agent_loop.h"
#include "launcher/proto.h"
#include "core/log.h"
#include "core/status.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------- process protocol --- */

/* Handles one command; returns bytes consumed from p->in, 0 when more input
 * is needed, -1 after a protocol error. */
static long proc_command(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	const char *head = (const char *)ibc_launch_buf_head(&p->in);
	size_t avail = ibc_launch_buf_avail(&p->in), ll;
	const char *nl = memchr(head, '\n', avail);
	char line[IBC_LAUNCH_LINE_MAX], resp[64];
	struct ibc_launch_kv kv[IBC_LAUNCH_KV_MAX];
	const char *cmd, *s;
	long long bytes = 0;
	int n, idx = (int)(p - a->proc);
	const unsigned char *payload;

	if (nl == NULL) {
		if (avail >= IBC_LAUNCH_LINE_MAX) {
			ibc_launch_proc_proto_error(a, p, "error", "line_too_long");
			return -1;
		}
		return 0;
	}
	ll = (size_t)(nl - head);
	if (ll >= IBC_LAUNCH_LINE_MAX) {
		ibc_launch_proc_proto_error(a, p, "error", "line_too_long");
		return -1;
	}
	memcpy(line, head, ll);
	line[ll] = '\0';
	n = ibc_launch_kv_parse(line, kv, IBC_LAUNCH_KV_MAX);
	if (n < 0) {
		ibc_launch_proc_proto_error(a, p, "error", "malformed_command");
		return -1;
	}
	cmd = kv[0].val;
	snprintf(resp, sizeof(resp), "%s_result", cmd);
	if (strncmp(cmd, "ibc_", 4) == 0 && ibc_launch_kv_find(kv, n, "bytes") != NULL) {
		if (ibc_launch_kv_long(kv, n, "bytes", &bytes) != IBC_OK || bytes < 0 ||
		    bytes > (long long)IBC_LAUNCH_WIRE_MAX / 2) {
			ibc_launch_proc_proto_error(a, p, resp, "bad_bytes");
			return -1;
		}
		if (avail < ll + 1 + (size_t)bytes)
			return 0;
	}
	payload = (const unsigned char *)head + ll + 1;
	ibc_debug("launch: rank %d: %s", p->rank, cmd);
	if (strcmp(kv[0].key, "mcmd") == 0) {
		ibc_launch_proc_proto_error(a, p, "error", "spawn_not_supported");
		return -1;
	}
	if (!p->inited && strcmp(cmd, "init") != 0 && strcmp(cmd, "initack") != 0) {
		ibc_launch_proc_proto_error(a, p, resp, "command_before_init");
		return -1;
	}
	if (p->finalized) {
		ibc_launch_proc_proto_error(a, p, resp, "command_after_finalize");
		return -1;
	}
	if (strcmp(cmd, "init") == 0) {
		if (p->inited) {
			ibc_launch_proc_proto_error(a, p, "response_to_init", "init_twice");
			return -1;
		}
		p->inited = 1;
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
	} else if (strcmp(cmd, "initack") == 0) {
		p->inited = 1;
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=initack rc=0\ncmd=set size=%u\ncmd=set rank=%d\ncmd=set debug=0",
			    a->job.np, p->rank);
	} else if (strcmp(cmd, "get_maxes") == 0) {
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=%d",
				       IBC_LAUNCH_VAL_MAX);
	} else if (strcmp(cmd, "get_appnum") == 0) {
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=appnum rc=0 appnum=0");
	} else if (strcmp(cmd, "get_my_kvsname") == 0) {
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=my_kvsname rc=0 kvsname=ibc_kvs_%u", a->job.jobid);
	} else if (strcmp(cmd, "get_universe_size") == 0) {
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=universe_size rc=0 size=%u", a->job.np);
	} else if (strcmp(cmd, "barrier_in") == 0) {
		ibc_launch_proc_coll(a, p, IBC_LAUNCH_COLL_FENCE, 0, NULL, 0, IBC_LAUNCH_WAIT_BARRIER);
	} else if (strcmp(cmd, "put") == 0) {
		const char *key = ibc_launch_kv_find(kv, n, "key"), *val = ibc_launch_kv_find(kv, n, "value");

		if (key == NULL || val == NULL || *key == '\0' || strlen(key) > 256 || strlen(val) > IBC_LAUNCH_VAL_MAX) {
			ibc_launch_proc_proto_error(a, p, "put_result", "bad_put");
			return -1;
		}
		ibc_launch_bb_put(a, key, val, strlen(val));
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=put_result rc=0 msg=success");
	} else if (strcmp(cmd, "get") == 0) {
		const char *key = ibc_launch_kv_find(kv, n, "key");
		char map[IBC_LAUNCH_VAL_MAX + 1];

		if (key == NULL || *key == '\0') {
			ibc_launch_proc_proto_error(a, p, "get_result", "bad_get");
			return -1;
		}
		if (strcmp(key, "PMI_process_mapping") == 0) {
			if (ibc_launch_pmi_mapping(a->job.start, a->job.nnodes, map, sizeof(map)) == IBC_OK)
				ibc_launch_proc_replyf(p, NULL, 0, "cmd=get_result rc=0 msg=success value=%s", map);
			else /* longer than vallen_max: not cut short, refused */
				ibc_launch_proc_replyf(p, NULL, 0, "cmd=get_result rc=-1 msg=process_mapping_too_long");
		} else {
			p->wait = IBC_LAUNCH_WAIT_PMIGET;
			ibc_launch_bb_get(a, key, idx, -1);
		}
	} else if (strcmp(cmd, "finalize") == 0) {
		p->finalized = 1;
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=finalize_ack rc=0");
	} else if (strcmp(cmd, "abort") == 0) {
		long long code = 1;

		s = ibc_launch_kv_find(kv, n, "msg");
		if (ibc_launch_kv_long(kv, n, "exitcode", &code) != IBC_OK)
			code = 1;
		ibc_launch_fail(a, p->rank, (int)(code & 255), "rank %d on %s called abort (exit code %lld)%s%s",
				p->rank, ibc_launch_host_of(a, p->rank), code, s && *s ? ": " : "", s ? s : "");
	} else if (strcmp(cmd, "ibc_coll") == 0) {
		long long root = 0;
		int op = ibc_launch_coll_find(ibc_launch_kv_find(kv, n, "op") ? ibc_launch_kv_find(kv, n, "op") : "");

		if (op < 0 || ibc_launch_kv_long(kv, n, "root", &root) != IBC_OK || root >= a->job.np) {
			ibc_launch_proc_proto_error(a, p, resp, "bad_collective");
			return -1;
		}
		ibc_launch_proc_coll(a, p, op, (int)root, payload, (size_t)bytes, IBC_LAUNCH_WAIT_COLL);
	} else if (strcmp(cmd, "ibc_send") == 0) {
		long long dst = 0, tag = 0;

		if (ibc_launch_kv_long(kv, n, "dest", &dst) != IBC_OK || dst < 0 || dst >= a->job.np ||
		    ibc_launch_kv_long(kv, n, "tag", &tag) != IBC_OK || tag < 0) {
			ibc_launch_proc_proto_error(a, p, resp, "bad_send");
			return -1;
		}
		ibc_launch_p2p_deliver(a, p->rank, (int)dst, (int)tag, payload, (size_t)bytes);
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=ibc_send_result rc=0");
	} else if (strcmp(cmd, "ibc_recv") == 0) {
		long long src = -1, tag = -1;

		if (ibc_launch_kv_long(kv, n, "src", &src) != IBC_OK || src >= a->job.np ||
		    ibc_launch_kv_long(kv, n, "tag", &tag) != IBC_OK) {
			ibc_launch_proc_proto_error(a, p, resp, "bad_recv");
			return -1;
		}
		p->wait = IBC_LAUNCH_WAIT_RECV;
		p->recv_src = (int)src;
		p->recv_tag = (int)tag;
		ibc_launch_p2p_try_recv(p);
	} else if (strcmp(cmd, "ibc_put") == 0) {
		s = ibc_launch_kv_find(kv, n, "key");
		if (s == NULL || *s == '\0' || strlen(s) > 255) {
			ibc_launch_proc_proto_error(a, p, resp, "bad_key");
			return -1;
		}
		ibc_launch_bb_put(a, s, payload, (size_t)bytes);
		ibc_launch_proc_replyf(p, NULL, 0, "cmd=ibc_put_result rc=0");
	} else if (strcmp(cmd, "ibc_get") == 0) {
		s = ibc_launch_kv_find(kv, n, "key");
		if (s == NULL || *s == '\0') {
			ibc_launch_proc_proto_error(a, p, resp, "bad_key");
			return -1;
		}
		p->wait = IBC_LAUNCH_WAIT_GET;
		ibc_launch_bb_get(a, s, idx, -1);
	} else {
		ibc_launch_proc_proto_error(a, p, resp, "unknown_command");
		return -1;
	}
	return (long)(ll + 1 + (size_t)bytes);
}

void ibc_launch_proc_input(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	while (p->wait == IBC_LAUNCH_WAIT_NONE && ibc_launch_buf_avail(&p->in) > 0 && !a->terminating) {
		long used = proc_command(a, p);

		if (used <= 0) {
			if (used < 0) {
				ibc_launch_buf_free(&p->in);
			}
			return;
		}
		ibc_launch_buf_consume(&p->in, (size_t)used);
	}
}
