/* Line parsing shared by the PMI server and the ibchar client (proto.h). */
#include "launcher/proto.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const coll_names[] = {
	"barrier", "fence", "gather", "allgather", "bcast", "scatter", "alltoall",
};

const char *ibc_launch_coll_name(int op)
{
	if (op < 0 || op >= IBC_LAUNCH_COLL_MAX_)
		return "?";
	return coll_names[op];
}

int ibc_launch_coll_find(const char *name)
{
	int i;

	for (i = 0; i < IBC_LAUNCH_COLL_MAX_; i++)
		if (strcmp(name, coll_names[i]) == 0)
			return i;
	return -1;
}

int ibc_launch_kv_parse(char *line, struct ibc_launch_kv *kv, int max)
{
	int n = 0;
	char *p = line, *tok;

	for (;;) {
		char *eq;

		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '\0')
			break;
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p != '\0')
			*p++ = '\0';
		eq = strchr(tok, '=');
		if (eq == NULL || eq == tok) {
			if (n == 0 || eq == tok)
				return IBC_ERR_PROTO;
			/* continuation of the previous value: re-join with a space */
			tok[-1] = ' ';
			continue;
		}
		if (n == max)
			return IBC_ERR_PROTO;
		*eq = '\0';
		kv[n].key = tok;
		kv[n].val = eq + 1;
		n++;
	}
	if (n == 0 || (strcmp(kv[0].key, "cmd") != 0 && strcmp(kv[0].key, "mcmd") != 0) ||
	    kv[0].val[0] == '\0')
		return IBC_ERR_PROTO;
	return n;
}

const char *ibc_launch_kv_find(const struct ibc_launch_kv *kv, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].val;
	return NULL;
}

int ibc_launch_kv_long(const struct ibc_launch_kv *kv, int n, const char *key, long long *out)
{
	const char *v = ibc_launch_kv_find(kv, n, key);
	char *end;
	long long x;

	if (v == NULL || *v == '\0')
		return IBC_ERR_PROTO;
	x = strtoll(v, &end, 10);
	if (*end != '\0' || x < -1 || x > (1LL << 40))
		return IBC_ERR_PROTO;
	*out = x;
	return IBC_OK;
}

/* Runs of nodes with the same count are one block. */
int ibc_launch_pmi_mapping(const int *start, unsigned nnodes, char *buf, size_t cap)
{
	size_t off = 0;
	unsigned j = 0;
	int w = snprintf(buf, cap, "(vector");

	while (w >= 0 && (off += (size_t)w) < cap && j < nnodes) {
		int cnt = start[j + 1] - start[j];
		unsigned e = j + 1;

		while (e < nnodes && start[e + 1] - start[e] == cnt)
			e++;
		w = snprintf(buf + off, cap - off, ",(%u,%u,%d)", j, e - j, cnt);
		j = e;
	}
	if (w >= 0 && off < cap)
		w = snprintf(buf + off, cap - off, ")");
	if (w < 0 || off + (size_t)w >= cap) {
		if (cap > 0)
			buf[0] = '\0';
		return IBC_ERR_NOMEM;
	}
	return IBC_OK;
}
