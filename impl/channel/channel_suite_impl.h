/* Internals of the channel suite: what channel_suite.c (the suite: its
 * variant table, per-point state, validation and the channel kernels) shares
 * with the files beside it, channel_raw.c (the raw RDMA-write kernels),
 * channel_hostmpi.c (the host MPI's kernels as variants) and channel_conns.c
 * (the connection-scaling table).  Not for use elsewhere. */
#ifndef IBC_CHANNEL_SUITE_IMPL_H
#define IBC_CHANNEL_SUITE_IMPL_H

#include "channel/channel_suite.h"
#include "core/status.h"
#include "xport/xport.h"

#include <stddef.h>
#include <stdint.h>

#define WAIT_NS 30000000000LL

#define PAD8(n) (((n) + 7) & ~(size_t)7)

enum cs_kind { CS_LAT, CS_BW, CS_BIBW };

struct cs_arg {
	const char *design;       /* NULL: raw RDMA writes (rdma-write), or with probe the
				     floor probe-write */
	int probe;                /* probe-write: the cache-line pattern, no transport */
	enum cs_kind kind;
	size_t chunk, lazy;       /* 0: the design's default */
	int staged;               /* the paper's staging copy of every packet (channel.h) */
};

/* --validate: each message of an iteration has its own place in sbuf and
 * rbuf (nmsg of them: the window's for a validated stream, else one), filled
 * before the iteration (prepare) with the pattern of its source,
 * destination, iteration and index (suite.h) and checked after it, in the
 * next prepare or in validate: neither is in a timed interval.  A validated
 * stream therefore sends from window buffers, not one (another cache
 * footprint: its bandwidth is not the unvalidated run's). */
struct cs_inst {
	struct ibc_channel *ch;
	unsigned char *sbuf, *rbuf;     /* nmsg messages of m bytes */
	size_t m;
	long window;
	long nmsg;
	long done_iter;                 /* the iteration whose messages rbuf holds unchecked, or 0 */
	uint64_t bad;                   /* wrong bytes received */
	long bad_iter, bad_msg;         /* the first */
	size_t bad_off;
	/* rdma-write */
	struct ibc_xport_mr *mr;        /* [window slots | ack word] remote writable */
	struct ibc_xport_mr *src;       /* nmsg slots, the sources */
	struct ibc_xport_rdesc peer_rd;
	size_t slot;                    /* PAD8(m) + 8 */
	uint64_t seq;
	/* probe-write */
	struct ibc_probe *probe;
	int yield;
};

/* where message k is sent from (rdma-write: its slot) */
static inline unsigned char *msg_src(const struct cs_inst *in, long k)
{
	if (in->src != NULL)
		return (unsigned char *)in->src->addr + (size_t)(k % in->nmsg) * in->slot;
	return in->sbuf + (size_t)(k % in->nmsg) * in->m;
}

/* after a run: what arrived is checked before the next one */
static inline int arrived(struct ibc_suite_op *o, struct cs_inst *in, int rc)
{
	if (rc == IBC_OK && o->ctx->cli->validate && !o->in_b2b)
		in->done_iter = o->iter;
	return rc;
}

/* channel_suite.c: the template of the suite's variants (their callbacks);
 * the host MPI's variants are made like it */
extern const struct ibc_suite_variant cs_tmpl;

/* channel_raw.c: the upper line, raw RDMA writes with no channel */
int cs_raw_setup(struct ibc_suite_op *o, struct cs_inst *in);
int cs_raw_lat(struct ibc_suite_op *o, struct cs_inst *in);
int cs_raw_bw(struct ibc_suite_op *o, struct cs_inst *in);

/* channel_raw.c: the floor, probe-write (the placement probe's write
 * pattern, harness/probe.c) beside the designs */
int cs_probe_usable(const struct ibc_suite_ctx *c, char *why, size_t cap);
int cs_probe_setup(struct ibc_suite_op *o, struct cs_inst *in);
int cs_probe_run(struct cs_inst *in);

/* channel_conns.c: the connection-scaling table (the suite's after) */
int cs_conn_table(struct ibc_suite_ctx *c);

#endif
