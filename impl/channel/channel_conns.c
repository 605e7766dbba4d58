/* The channel suite's connection-scaling table (thesis ch. 4, Table 4.1):
 * rank 0 writes channel-conn.csv after a run, one row measured on the run's
 * transport and the rows computed for larger jobs (cs_conn_table below). */
#include "channel/channel_suite_impl.h"

#include "boot/boot.h"
#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"
#include "harness/harness.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kB of a "Vm..." line of /proc/self/status, -1 if absent */
static long proc_kb(const char *key)
{
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The distinct peers a dissemination schedule (the barriers' RDS) talks to. */
static long diss_peers(long n)
{
	long k, p = 0;

	for (k = 1; k < n; k *= 2)
		p += 2;
	return p < n - 1 ? p : n - 1;
}

/* Thesis ch. 4, Table 4.1 and the memory behind it: rank 0 writes
 * DIR/channel-conn.csv, a row measured on this run's transport and the
 * computed rows for n nodes x c cores up to 64 K processes:
 *   rc-all           every peer: n c - 1 QPs per process
 *   rc-ondemand-ring connected at first use, a ring's neighbours: 2
 *   rc-ondemand-diss ... a dissemination barrier's peers: 2 ceil(log2 n c)
 *   xrc              one connection per node: n QPs, one SRQ
 * Bytes: per RC QP, its send and receive queues (the verbs transport's own
 * estimate, from the device's WQE sizes: sq_depth (64 + 16 max_sge +
 * max_inline) + rq_depth (16 + 16 max_sge)); an XRC initiator has only the
 * send part, and a process one SRQ of the receive part. */
int cs_conn_table(struct ibc_suite_ctx *c)
{
	static const char *const cols[] = { "source", "xport", "nodes", "cores", "job_size",
					    "scheme", "qps_per_process", "srqs_per_process",
					    "bytes_per_process", "note" };
	static const long cores[] = { 1, 2, 4, 8, 16, 32, 64 };
	struct ibc_xport_stats st;
	struct ibc_csv_writer *w = NULL;
	const struct ibc_xport_caps *cp = &c->x->caps;
	double sq = (double)c->x->params.sq_depth * (64.0 + 16.0 * cp->max_sge + cp->max_inline);
	double rq = (double)c->x->params.rq_depth * (16.0 + 16.0 * cp->max_sge);
	char path[4200], f[10][64], note[160];
	const char *fp[10];
	size_t k;
	long n;
	int rc, i;

	if (c->boot->rank != 0)
		return IBC_OK;
	rc = ibc_xport_stats_get(c->x, &st);
	snprintf(path, sizeof(path), "%s/channel-conn.csv", c->cli->out);
	if (rc == IBC_OK)
		rc = ibc_csv_writer_open(path, cols, 10, 0, &w);
	for (i = 0; i < 10; i++)
		fp[i] = f[i];
	fp[9] = note;
	if (rc == IBC_OK) {
		snprintf(f[0], 64, "measured");
		snprintf(f[1], 64, "%s", cp->backend);
		snprintf(f[2], 64, "%d", c->boot->num_nodes);
		snprintf(f[3], 64, "%d", c->boot->local_size);
		snprintf(f[4], 64, "%d", c->boot->size);
		snprintf(f[5], 64, "%s", strcmp(cp->backend, "shm") == 0 ? "emulated" : "rc-ondemand");
		snprintf(f[6], 64, "%llu", (unsigned long long)st.qps);
		snprintf(f[7], 64, "%llu", (unsigned long long)st.srqs);
		snprintf(f[8], 64, "%llu", (unsigned long long)st.conn_bytes);
		snprintf(note, sizeof(note), "VmPin %ld kB, VmLck %ld kB, VmRSS %ld kB (/proc/self/status)",
			 proc_kb("VmPin"), proc_kb("VmLck"), proc_kb("VmRSS"));
		rc = ibc_csv_writer_row(w, fp);
	}
	note[0] = '\0';
	for (k = 0; rc == IBC_OK && k < sizeof(cores) / sizeof(cores[0]); k++)
		for (n = 1; rc == IBC_OK && n * cores[k] <= 65536; n *= 2) {
			long N = n * cores[k];
			const struct { const char *name; long qps, srqs; double bytes; } sc[] = {
				{ "rc-all", N - 1, 0, (double)(N - 1) * (sq + rq) },
				{ "rc-ondemand-ring", N > 2 ? 2 : N - 1, 0, (N > 2 ? 2 : N - 1) * (sq + rq) },
				{ "rc-ondemand-diss", diss_peers(N), 0, (double)diss_peers(N) * (sq + rq) },
				{ "xrc", n, 1, (double)n * sq + rq },
			};

			for (i = 0; rc == IBC_OK && i < 4; i++) {
				snprintf(f[0], 64, "computed");
				snprintf(f[1], 64, "%s", cp->backend);
				snprintf(f[2], 64, "%ld", n);
				snprintf(f[3], 64, "%ld", cores[k]);
				snprintf(f[4], 64, "%ld", N);
				snprintf(f[5], 64, "%s", sc[i].name);
				snprintf(f[6], 64, "%ld", sc[i].qps);
				snprintf(f[7], 64, "%ld", sc[i].srqs);
				snprintf(f[8], 64, "%.0f", sc[i].bytes);
				rc = ibc_csv_writer_row(w, fp);
			}
		}
	if (w && ibc_csv_writer_close(w) && rc == IBC_OK)
		rc = IBC_ERR_IO;
	if (rc)
		ibc_error("channel: writing %s: %s", path, ibc_status_str(rc));
	return rc;
}
