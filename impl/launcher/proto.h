/* The process-side protocol on PMI_FD: PMI-1 wire protocol lines
 * ("cmd=NAME key=value ...\n") plus ibchar's own commands, which are PMI-style
 * lines optionally followed by a binary payload whose size is given by the
 * line's bytes= attribute (see WIRE.md, "Process protocol"). */
#ifndef IBC_LAUNCH_PROTO_H
#define IBC_LAUNCH_PROTO_H

#include <stddef.h>

#define IBC_LAUNCH_LINE_MAX 4096
#define IBC_LAUNCH_KV_MAX 16
#define IBC_LAUNCH_VAL_MAX 1024 /* PMI-1 vallen_max: the longest put or get value */

struct ibc_launch_kv {
	char *key, *val; /* point into the parsed line */
};

/* Splits line (modified in place, no trailing newline) into key=value
 * tokens.  A token without '=' continues the previous value (so "msg=a b"
 * stays one value).  The first key must be "cmd" or "mcmd".  Returns the
 * count or IBC_ERR_PROTO. */
int ibc_launch_kv_parse(char *line, struct ibc_launch_kv *kv, int max);
/* The value of key, or NULL. */
const char *ibc_launch_kv_find(const struct ibc_launch_kv *kv, int n, const char *key);
/* A non-negative decimal attribute; IBC_ERR_PROTO when absent or bad. */
int ibc_launch_kv_long(const struct ibc_launch_kv *kv, int n, const char *key, long long *out);

/* Collective operations of the process protocol (op= attribute). */
enum ibc_launch_coll_op {
	IBC_LAUNCH_COLL_BARRIER = 0,
	IBC_LAUNCH_COLL_FENCE,     /* barrier that also publishes the bulletin board */
	IBC_LAUNCH_COLL_GATHER,
	IBC_LAUNCH_COLL_ALLGATHER,
	IBC_LAUNCH_COLL_BCAST,
	IBC_LAUNCH_COLL_SCATTER,
	IBC_LAUNCH_COLL_ALLTOALL,
	IBC_LAUNCH_COLL_MAX_
};
const char *ibc_launch_coll_name(int op);
/* PMI_process_mapping "(vector,(node,count,per_node),...)" of a job whose
 * node j holds ranks start[j]..start[j+1]-1, into buf (cap bytes with the
 * NUL); IBC_ERR_NOMEM, buf "", when it does not fit whole. */
int ibc_launch_pmi_mapping(const int *start, unsigned nnodes, char *buf, size_t cap);
int ibc_launch_coll_find(const char *name);

#endif
