/* ibchar-launch: the ScELA-style tree launcher (impl/launcher). */
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "launcher/cache.h"
#include "launcher/job.h"
#include "launcher/slurm.h"
#include "launcher/tree.h"

#include <stdlib.h>
#include <string.h>

static long np = 0, ppn = 0, max_conn = IBC_LAUNCH_MAX_CONN_DEFAULT, max_depth = IBC_LAUNCH_MAX_DEPTH_DEFAULT;
static double timeout_s = 0;
static const char *hosts, *hostfile, *rsh, *degree = "auto", *addr, *stats_csv, *agent, *proxy;
static int mode, cache, tag_output, stats;
static size_t cache_bytes;
static struct ibc_opt_strlist xenv;
static const char *const modes[] = { "tree", "flat", NULL };

static const struct ibc_opt opts[] = {
	{ "np", 'n', IBC_OPT_INT, &np, "NP", "number of processes (default: the slots, or one per host)", .min = 1, .max = 1e6 },
	{ "hosts", 'H', IBC_OPT_STRING, &hosts, "H1,H2[:SLOTS],...", "hosts to run on", .choices = NULL },
	{ "hostfile", 'f', IBC_OPT_STRING, &hostfile, "FILE", "hosts, one a line: 'name [slots=N]' or 'name:N'", .choices = NULL },
	{ "ppn", 0, IBC_OPT_INT, &ppn, "C", "processes per host (default: contiguous blocks, as even as possible)", .min = 1, .max = 1e5 },
	{ "rsh", 0, IBC_OPT_STRING, &rsh, "ssh|local|TEMPLATE",
	  "remote shell: ssh (BatchMode; default with hosts), local (default without), or a template with {host}, e.g. 'ip netns exec {host}'", .choices = NULL },
	{ "degree", 'k', IBC_OPT_STRING, &degree, "auto|K", "degree of the NLA tree (auto: depth <= max-depth, c + k + 1 <= max-conn)", .choices = NULL },
	{ "max-conn", 0, IBC_OPT_INT, &max_conn, "N", "MAX_CONN of the degree rule", .min = 2, .max = 1e6 },
	{ "max-depth", 0, IBC_OPT_INT, &max_depth, "N", "MAX_DEPTH of the degree rule", .min = 1, .max = 64 },
	{ "mode", 0, IBC_OPT_CHOICE, &mode, "tree|flat", "tree: node launch agents; flat: every process through the remote shell, connected to the launcher", .choices = modes },
	{ "cache", 0, IBC_OPT_CHOICE, &cache, "POLICY", "node-level cache: hcs, hcma, hcmab, hcmab-lru", .choices = ibc_launch_cache_names },
	{ "cache-bytes", 0, IBC_OPT_SIZE, &cache_bytes, "B", "memory bound of each NLA cache for hcmab-lru (default 1 KiB per process)", .choices = NULL },
	{ "timeout", 't', IBC_OPT_DOUBLE, &timeout_s, "S", "end the job after S seconds (exit status 124; 0 = none)", .min = 0, .max = 1e7 },
	{ "tag-output", 0, IBC_OPT_FLAG, &tag_output, NULL, "prefix every output line with [rank]", .choices = NULL },
	{ "export", 'x', IBC_OPT_APPEND, &xenv, "VAR[=VAL]", "export VAR (its value here, or VAL) to every process", .choices = NULL },
	{ "addr", 0, IBC_OPT_STRING, &addr, "IP", "address the node agents connect back to (default: the route towards each host)", .choices = NULL },
	{ "stats", 0, IBC_OPT_FLAG, &stats, NULL, "print the per-agent counters on stderr at the end", .choices = NULL },
	{ "stats-csv", 0, IBC_OPT_STRING, &stats_csv, "FILE", "write the per-agent counters as CSV", .choices = NULL },
	{ "agent", 0, IBC_OPT_STRING, &agent, "ADDR:PORT:I:TOKEN", "internal: run as the node launch agent with tree index I", .choices = NULL },
	{ "proxy", 0, IBC_OPT_STRING, &proxy, "ADDR:PORT:R:TOKEN", "internal: flat-mode proxy that becomes rank R", .choices = NULL },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	"ibchar-launch", "[OPTIONS] -- PROGRAM [ARGS...]",
	"Starts NP copies of PROGRAM over the hosts through node launch agents that form a k-ary tree "
	"(ScELA), serving PMI-1 and ibchar's primitives on PMI_FD.",
	opts,
	"Exit status: 0, or the first failing rank's status (128+N for signal N), 124 on --timeout, "
	"128+N when the launcher gets signal N, 2 for bad input.\n"
	"Environment of every process: PMI_FD PMI_RANK PMI_SIZE IBC_LAUNCH_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE,NODE,NNODES,HOST,JOBID}.\n"
	"Host names resolve through $IBC_HOSTS_FILE (default /run/ibchar/testhosts.hosts, written by "
	"scripts/testhosts), then DNS; test hosts: --rsh 'ip netns exec {host}'.  Inside a Slurm allocation "
	"(SLURM_JOB_NODELIST set) and without --hosts/--hostfile: the job's hosts and slots, and node agents "
	"started by srun (--rsh '" IBC_LAUNCH_SLURM_RSH "') instead of ssh.  Protocols: impl/launcher/WIRE.md.",
	1,
};

int main(int argc, char **argv)
{
	struct ibc_launch_opts o;
	char *slurm_hosts = NULL;
	int first = 0, rc, code = 1;

	ibc_log_init("ibchar-launch");
	rc = ibc_opt_parse(&spec, argc, argv, &first);
	if (rc == IBC_OPT_HELP_SHOWN)
		return 0;
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	if (agent != NULL) {
		ibc_launch_agent_main(agent, &code);
		return code;
	}
	if (proxy != NULL) {
		ibc_launch_proxy_main(proxy, &code);
		return code;
	}
	/* inside a Slurm allocation: its hosts and slots, agents started by srun */
	if (hosts == NULL && hostfile == NULL) {
		rc = ibc_launch_slurm_hosts(&slurm_hosts);
		if (rc == IBC_OK) {
			hosts = slurm_hosts;
			if (rsh == NULL)
				rsh = IBC_LAUNCH_SLURM_RSH;
			ibc_info("ibchar-launch: in Slurm job %s: hosts %s", getenv("SLURM_JOB_ID"), hosts);
		} else if (rc != IBC_ERR_NOTFOUND) {
			return ibc_status_exit_code(rc);
		}
	}
	memset(&o, 0, sizeof(o));
	o.np = np;
	o.ppn = ppn;
	o.max_conn = max_conn;
	o.max_depth = max_depth;
	o.timeout = timeout_s;
	o.hosts = hosts;
	o.hostfile = hostfile;
	o.rsh = rsh;
	o.addr = addr;
	o.stats_csv = stats_csv;
	o.mode = mode;
	o.cache = cache;
	o.tag_output = tag_output;
	o.stats = stats;
	o.cache_bytes = cache_bytes;
	o.nenv = (int)xenv.n;
	o.env = xenv.v;
	o.argc = argc - first;
	o.argv = argv + first;
	if (strcmp(degree, "auto") != 0) {
		if (ibc_opt_parse_long(degree, &o.degree) != IBC_OK || o.degree < 1) {
			ibc_error("--degree: want auto or a number >= 1, got '%s'", degree);
			return 2;
		}
	}
	rc = ibc_launch_run(&o, &code);
	free(slurm_hosts);
	return code;
}
