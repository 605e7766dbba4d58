/* Pure functions of the launcher: tree shapes, the ScELA degree rule,
 * placement, hostfile parsing, cache LRU bound, PMI line parsing. */
#include "tap.h"
#include "core/status.h"
#include "launcher/cache.h"
#include "launcher/proto.h"
#include "launcher/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void shapes(void)
{
	int first, n, k, i, ok;

	tap_is_int(ibc_launch_tree_depth(1, 2), 0, "one entry: depth 0");
	tap_is_int(ibc_launch_tree_depth(3, 2), 1, "binary tree of 3: depth 1");
	tap_is_int(ibc_launch_tree_depth(4, 2), 2, "binary tree of 4: depth 2");
	tap_is_int(ibc_launch_tree_depth(13, 3), 2, "3-ary tree of 13: depth 2");
	tap_is_int(ibc_launch_tree_depth(14, 3), 3, "3-ary tree of 14: depth 3");
	tap_is_int(ibc_launch_tree_depth(5, 1), 4, "chain of 5: depth 4");
	tap_is_int(ibc_launch_tree_parent(0, 3), -1, "root has no parent");
	tap_is_int(ibc_launch_tree_parent(7, 3), 2, "parent of 7 in a 3-ary tree");
	n = ibc_launch_tree_children(2, 3, 10, &first);
	tap_ok(n == 3 && first == 7, "children of 2 in a 3-ary tree of 10: 7..9");
	n = ibc_launch_tree_children(2, 3, 9, &first);
	tap_ok(n == 2 && first == 7, "children of 2 in a 3-ary tree of 9: 7..8");
	tap_is_int(ibc_launch_tree_children(3, 3, 10, &first), 0, "leaf has no children");
	tap_ok(ibc_launch_tree_in_subtree(9, 2, 3) && !ibc_launch_tree_in_subtree(9, 1, 3) &&
	       ibc_launch_tree_in_subtree(9, 0, 3), "subtree membership");
	tap_is_int(ibc_launch_tree_route_down(9, 0, 3), 2, "route from the root to 9 goes via 2");
	tap_is_int(ibc_launch_tree_route_down(9, 2, 3), 9, "route from 2 to its child 9");
	tap_is_int(ibc_launch_tree_route_down(9, 1, 3), -1, "9 is not below 1");
	/* every node of some trees: parent/children agree */
	ok = 1;
	for (k = 1; k <= 5; k++)
		for (i = 1; i < 50; i++) {
			int p = ibc_launch_tree_parent(i, k), c = ibc_launch_tree_children(p, k, 50, &first);

			if (i < first || i >= first + c)
				ok = 0;
		}
	tap_ok(ok, "parent and children agree for k = 1..5");
}

static void degree(void)
{
	int k = 0;

	tap_is_int(ibc_launch_tree_degree(8, 8, 3, 128, &k), IBC_OK, "rule accepts 8 nodes");
	tap_is_int(k, 2, "8 nodes, max depth 3: k = 2 (2^3 covers 8 + root)");
	ibc_launch_tree_degree(8, 8, 1, 128, &k);
	tap_is_int(k, 8, "8 nodes, max depth 1: the root talks to all");
	ibc_launch_tree_degree(1000, 8, 2, 128, &k);
	tap_is_int(k, 32, "1000 nodes, max depth 2: k = 32 (1 + 32 + 1024 >= 1001)");
	ibc_launch_tree_degree(1000, 100, 2, 128, &k);
	tap_is_int(k, 27, "c + k + 1 > MAX_CONN: k = MAX_CONN - 1 - c = 27");
	ibc_launch_tree_degree(1000, 200, 2, 128, &k);
	tap_is_int(k, 1, "k never below 1");
	ibc_launch_tree_degree(1, 4, 3, 128, &k);
	tap_is_int(k, 1, "one node: k = 1");
	tap_is_int(ibc_launch_tree_degree(0, 4, 3, 128, &k), IBC_ERR_INVAL, "no nodes rejected");
	for (int n = 1; n <= 300; n += 7) {
		ibc_launch_tree_degree(n, 4, 3, 128, &k);
		if (ibc_launch_tree_depth(n + 1, k) > 3 || (k > 1 && ibc_launch_tree_depth(n + 1, k - 1) <= 3)) {
			tap_ok(0, "rule picks the smallest k with depth <= 3 for %d nodes", n);
			return;
		}
	}
	tap_ok(1, "rule picks the smallest k with depth <= 3 for 1..300 nodes");
}

static void placement(void)
{
	int c[8], slots[4] = { 2, 0, 1, 5 };
	char err[200];

	tap_is_int(ibc_launch_place(10, 4, NULL, 0, c, err, sizeof(err)), IBC_OK, "10 on 4");
	tap_ok(c[0] == 3 && c[1] == 3 && c[2] == 2 && c[3] == 2, "blocks as even as possible: 3 3 2 2");
	ibc_launch_place(3, 4, NULL, 0, c, err, sizeof(err));
	tap_ok(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 0, "fewer ranks than hosts: 1 1 1 0");
	ibc_launch_place(5, 4, NULL, 2, c, err, sizeof(err));
	tap_ok(c[0] == 2 && c[1] == 2 && c[2] == 1 && c[3] == 0, "--ppn 2: 2 2 1 0");
	tap_is_int(ibc_launch_place(9, 4, NULL, 2, c, err, sizeof(err)), IBC_ERR_INVAL, "--ppn 2 on 4 hosts: 9 do not fit");
	tap_is_int(ibc_launch_place(8, 4, slots, 0, c, err, sizeof(err)), IBC_OK, "slots 2,-,1,5");
	tap_ok(c[0] == 2 && c[1] + c[2] + c[3] == 6 && c[2] <= 1, "slots respected: %d %d %d %d", c[0], c[1], c[2], c[3]);
	slots[1] = 1;
	tap_is_int(ibc_launch_place(10, 4, slots, 0, c, err, sizeof(err)), IBC_ERR_INVAL, "NP > slots rejected");
	tap_ok(strstr(err, "slots") != NULL, "message names the slots: %s", err);
	{
		int start[] = { 0, 3, 5, 8 };

		tap_ok(ibc_launch_rank_node(start, 3, 0) == 0 && ibc_launch_rank_node(start, 3, 4) == 1 &&
		       ibc_launch_rank_node(start, 3, 7) == 2 && ibc_launch_rank_node(start, 3, 8) == -1,
		       "rank -> node");
	}
}

static void hostfile(void)
{
	char **names = NULL, err[200] = "";
	int *slots = NULL, n, i;

	n = ibc_launch_hostfile_parse("# cluster\nibc-h1 slots=4\n\n  ibc-h2:2  # two\nibc-h3\n", &names, &slots, err,
				      sizeof(err));
	tap_is_int(n, 3, "three hosts");
	if (n == 3) {
		tap_ok(strcmp(names[0], "ibc-h1") == 0 && slots[0] == 4 && strcmp(names[1], "ibc-h2") == 0 &&
		       slots[1] == 2 && slots[2] == 0, "names and slots");
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		free(slots);
	}
	tap_is_int(ibc_launch_hostfile_parse("a\nb slots=x\n", &names, &slots, err, sizeof(err)), IBC_ERR_INVAL,
		   "bad slots rejected");
	tap_ok(strncmp(err, "line 2", 6) == 0, "message names the line: %s", err);
	tap_is_int(ibc_launch_hostfile_parse("a b\n", &names, &slots, err, sizeof(err)), IBC_ERR_INVAL,
		   "stray word rejected");
	tap_is_int(ibc_launch_hostfile_parse("h$st\n", &names, &slots, err, sizeof(err)), IBC_ERR_INVAL,
		   "bad host name rejected");
	tap_is_int(ibc_launch_hostfile_parse("# nothing\n", &names, &slots, err, sizeof(err)), IBC_ERR_INVAL,
		   "empty hostfile rejected");
	tap_is_int(ibc_launch_hostfile_parse("a:0\n", &names, &slots, err, sizeof(err)), IBC_ERR_INVAL,
		   "zero slots rejected");
}

static void cache(void)
{
	struct ibc_launch_cache c;
	char key[32], val[64];
	size_t len;
	const void *v;
	int i;

	ibc_launch_cache_init(&c, 0);
	for (i = 0; i < 3000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(val, sizeof(val), "v%d", i);
		ibc_launch_cache_put(&c, key, val, strlen(val));
	}
	v = ibc_launch_cache_get(&c, "k1234", &len);
	tap_ok(v != NULL && len == 5 && memcmp(v, "v1234", 5) == 0, "unbounded cache keeps everything");
	ibc_launch_cache_put(&c, "k1234", "new", 3);
	v = ibc_launch_cache_get(&c, "k1234", &len);
	tap_ok(v != NULL && len == 3 && c.count == 3000, "put replaces");
	ibc_launch_cache_fini(&c);

	ibc_launch_cache_init(&c, 1000);
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		ibc_launch_cache_put(&c, key, "0123456789", 10);
		if (i == 5)
			ibc_launch_cache_get(&c, "k0", &len); /* k0 stays recent */
	}
	tap_ok(c.mem <= 1000 && c.mem_hwm <= 1000, "bounded cache stays under its bound (%llu)",
	       (unsigned long long)c.mem_hwm);
	tap_ok(ibc_launch_cache_get(&c, "k99", &len) != NULL, "most recent entry kept");
	tap_ok(ibc_launch_cache_get(&c, "k1", &len) == NULL, "least recently used entry evicted");
	tap_ok(c.evictions > 0, "evictions counted");
	ibc_launch_cache_fini(&c);
}

static void lines(void)
{
	struct ibc_launch_kv kv[IBC_LAUNCH_KV_MAX];
	char l1[] = "cmd=put kvsname=kvs_1 key=a value=b=c";
	char l2[] = "cmd=abort exitcode=3 msg=it went wrong";
	char l3[] = "hello world", l4[] = "=x", l5[] = "key=v cmd=x", l6[] = "";
	long long x;
	int n;

	n = ibc_launch_kv_parse(l1, kv, IBC_LAUNCH_KV_MAX);
	tap_is_int(n, 4, "four attributes");
	tap_is_str(ibc_launch_kv_find(kv, n, "value"), "b=c", "value keeps later '='");
	n = ibc_launch_kv_parse(l2, kv, IBC_LAUNCH_KV_MAX);
	tap_is_str(ibc_launch_kv_find(kv, n, "msg"), "it went wrong", "words without '=' continue the value");
	tap_ok(ibc_launch_kv_long(kv, n, "exitcode", &x) == IBC_OK && x == 3, "numeric attribute");
	tap_is_int(ibc_launch_kv_long(kv, n, "msg", &x), IBC_ERR_PROTO, "non-numeric attribute rejected");
	tap_is_int(ibc_launch_kv_parse(l3, kv, IBC_LAUNCH_KV_MAX), IBC_ERR_PROTO, "no cmd= rejected");
	tap_is_int(ibc_launch_kv_parse(l4, kv, IBC_LAUNCH_KV_MAX), IBC_ERR_PROTO, "empty key rejected");
	tap_is_int(ibc_launch_kv_parse(l5, kv, IBC_LAUNCH_KV_MAX), IBC_ERR_PROTO, "cmd must come first");
	tap_is_int(ibc_launch_kv_parse(l6, kv, IBC_LAUNCH_KV_MAX), IBC_ERR_PROTO, "empty line rejected");
	tap_is_int(ibc_launch_coll_find("alltoall"), IBC_LAUNCH_COLL_ALLTOALL, "collective names");
}

int main(void)
{
	tap_plan_none();
	shapes();
	degree();
	placement();
	hostfile();
	cache();
	lines();
	return tap_done();
}
