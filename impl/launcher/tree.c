/* Pure arithmetic of the launcher tree and placement (tree.h). */
#include "launcher/tree.h"
#include "core/status.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ibc_launch_tree_depth(int n, int k)
{
	int d = 0;
	long long level = 1, total = 1;

	if (n <= 1)
		return 0;
	if (k < 1)
		return -1;
	while (total < n) {
		level *= k;
		total += level;
		d++;
	}
	return d;
}

int ibc_launch_tree_degree(int nnodes, int c, int max_depth, int max_conn, int *k_out)
{
	int k = 1;

	if (nnodes < 1 || c < 0 || max_depth < 1 || max_conn < 2)
		return IBC_ERR_INVAL;
	while (ibc_launch_tree_depth(nnodes + 1, k) > max_depth)
		k++;
	if (c + k + 1 > max_conn)
		k = max_conn - 1 - c;
	if (k < 1)
		k = 1;
	*k_out = k;
	return IBC_OK;
}

int ibc_launch_tree_parent(int i, int k)
{
	return i <= 0 ? -1 : (i - 1) / k;
}

int ibc_launch_tree_children(int i, int k, int n, int *first)
{
	long long f = (long long)i * k + 1;
	long long cnt;

	*first = (int)f;
	if (f >= n)
		return 0;
	cnt = n - f;
	return cnt < k ? (int)cnt : k;
}

int ibc_launch_tree_in_subtree(int i, int top, int k)
{
	while (i > top)
		i = (i - 1) / k;
	return i == top;
}

int ibc_launch_tree_route_down(int i, int top, int k)
{
	while (i > top) {
		int p = (i - 1) / k;

		if (p == top)
			return i;
		i = p;
	}
	return -1;
}

int ibc_launch_place(int np, int nhosts, const int *slots, int ppn, int *count,
		     char *err, size_t errlen)
{
	long long cap = 0;
	int left = np, j, unbounded = 0;

	if (np < 1 || nhosts < 1) {
		snprintf(err, errlen, "need at least one process and one host");
		return IBC_ERR_INVAL;
	}
	for (j = 0; j < nhosts; j++) {
		count[j] = 0;
		if (slots != NULL && slots[j] > 0)
			cap += slots[j];
		else
			unbounded = 1;
	}
	if (ppn > 0) {
		for (j = 0; j < nhosts && left > 0; j++) {
			int s = (slots != NULL && slots[j] > 0) ? slots[j] : ppn;
			int take = ppn < s ? ppn : s;

			if (take > left)
				take = left;
			count[j] = take;
			left -= take;
		}
		if (left > 0) {
			snprintf(err, errlen, "%d processes do not fit on %d host(s) with --ppn %d%s", np,
				 nhosts, ppn, slots != NULL ? " and the slots given" : "");
			return IBC_ERR_INVAL;
		}
		return IBC_OK;
	}
	if (!unbounded && cap < np) {
		snprintf(err, errlen, "%d processes asked but the hosts give only %lld slots", np, cap);
		return IBC_ERR_INVAL;
	}
	/* as even as possible, then move the overflow of bounded hosts on */
	for (j = 0; j < nhosts; j++)
		count[j] = np / nhosts + (j < np % nhosts ? 1 : 0);
	for (;;) {
		int over = 0, room;

		for (j = 0; j < nhosts; j++) {
			if (slots != NULL && slots[j] > 0 && count[j] > slots[j]) {
				over += count[j] - slots[j];
				count[j] = slots[j];
			}
		}
		if (over == 0)
			break;
		for (j = 0; j < nhosts && over > 0; j++) {
			room = (slots != NULL && slots[j] > 0) ? slots[j] - count[j] : over;
			if (room > 0) {
				int add = room < over ? room : over;

				count[j] += add;
				over -= add;
			}
		}
		if (over > 0) {
			snprintf(err, errlen, "%d processes do not fit in the slots given", np);
			return IBC_ERR_INVAL;
		}
	}
	return IBC_OK;
}

int ibc_launch_rank_node(const int *start, int nnodes, int r)
{
	int lo = 0, hi = nnodes - 1;

	if (r < start[0] || r >= start[nnodes])
		return -1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (start[mid] <= r)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int valid_host_char(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_';
}

static int parse_slots(const char *s, int *slots)
{
	long v;
	char *end;

	if (*s == '\0')
		return IBC_ERR_INVAL;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < 1 || v > 1000000)
		return IBC_ERR_INVAL;
	*slots = (int)v;
	return IBC_OK;
}

int ibc_launch_host_item_parse(const char *item, char **name, int *slots)
{
	size_t n = 0;

	*slots = 0;
	*name = NULL;
	while (valid_host_char((unsigned char)item[n]))
		n++;
	if (n == 0 || n > 255)
		return IBC_ERR_INVAL;
	if (item[n] == ':') {
		if (parse_slots(item + n + 1, slots) != IBC_OK)
			return IBC_ERR_INVAL;
	} else if (item[n] != '\0') {
		return IBC_ERR_INVAL;
	}
	*name = strndup(item, n);
	return *name == NULL ? IBC_ERR_NOMEM : IBC_OK;
}

int ibc_launch_hostfile_parse(const char *text, char ***names_out, int **slots_out, char *err, size_t errlen)
{
	char **names = NULL;
	int *slots = NULL, n = 0, line = 0, rc = IBC_OK;
	const char *p = text;

	while (*p != '\0') {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char buf[512], *tok, *save = NULL, *hash;
		char *name = NULL;
		int s = 0;

		line++;
		if (len >= sizeof(buf)) {
			snprintf(err, errlen, "line %d: too long", line);
			rc = IBC_ERR_INVAL;
			goto err_free_list;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		p += len + (eol ? 1 : 0);
		hash = strchr(buf, '#');
		if (hash != NULL)
			*hash = '\0';
		tok = strtok_r(buf, " \t\r", &save);
		if (tok == NULL)
			continue;
		if (ibc_launch_host_item_parse(tok, &name, &s) != IBC_OK) {
			snprintf(err, errlen, "line %d: bad host '%s'", line, tok);
			rc = IBC_ERR_INVAL;
			goto err_free_list;
		}
		while ((tok = strtok_r(NULL, " \t\r", &save)) != NULL) {
			if (strncmp(tok, "slots=", 6) == 0 && parse_slots(tok + 6, &s) == IBC_OK)
				continue;
			if (strncmp(tok, "max_slots=", 10) == 0 || strncmp(tok, "max-slots=", 10) == 0)
				continue;
			snprintf(err, errlen, "line %d: unexpected '%s' (want 'host [slots=N]')", line, tok);
			free(name);
			rc = IBC_ERR_INVAL;
			goto err_free_list;
		}
		{
			char **nn = realloc(names, (size_t)(n + 1) * sizeof(*names));
			int *ns;

			if (nn == NULL) {
				free(name);
				rc = IBC_ERR_NOMEM;
				goto err_free_list;
			}
			names = nn;
			ns = realloc(slots, (size_t)(n + 1) * sizeof(*slots));
			if (ns == NULL) {
				free(name);
				rc = IBC_ERR_NOMEM;
				goto err_free_list;
			}
			slots = ns;
		}
		names[n] = name;
		slots[n] = s;
		n++;
	}
	if (n == 0) {
		snprintf(err, errlen, "no hosts in the hostfile");
		rc = IBC_ERR_INVAL;
		goto err_free_list;
	}
	*names_out = names;
	*slots_out = slots;
	return n;

err_free_list:
	while (n > 0)
		free(names[--n]);
	free(names);
	free(slots);
	return rc;
}
