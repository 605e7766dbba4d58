/* Pure arithmetic of the launcher: the k-ary NLA tree, the degree rule of
 * ScELA (thesis 2.2.2), rank placement and hostfile parsing.  No I/O.
 *
 * Tree indices: 0 is the launcher (the root), NLA of node j (0-based) is
 * index j + 1; parent(i) = (i - 1) / k, children i*k + 1 .. i*k + k. */
#ifndef IBC_LAUNCH_TREE_H
#define IBC_LAUNCH_TREE_H

#include <stddef.h>

#define IBC_LAUNCH_MAX_CONN_DEFAULT 128
#define IBC_LAUNCH_MAX_DEPTH_DEFAULT 3

/* Levels below the root of a heap-shaped k-ary tree with n entries (n >= 1). */
int ibc_launch_tree_depth(int n, int k);
/* Degree rule: the smallest k >= 1 whose tree over nnodes NLAs + the root
 * has depth <= max_depth; then if c + k + 1 > max_conn, k = max_conn - 1 - c
 * (at least 1).  c = processes per node.  IBC_ERR_INVAL for bad inputs. */
int ibc_launch_tree_degree(int nnodes, int c, int max_depth, int max_conn, int *k_out);
int ibc_launch_tree_parent(int i, int k);
/* Children of i in a tree of n entries: first child and count. */
int ibc_launch_tree_children(int i, int k, int n, int *first);
/* 1 when i is `top` or a descendant of it. */
int ibc_launch_tree_in_subtree(int i, int top, int k);
/* The child of `top` whose subtree holds i (i must be below top), else -1. */
int ibc_launch_tree_route_down(int i, int top, int k);

/* Placement: ranks in contiguous blocks, node j holds count[j] ranks.
 * ppn > 0: every host gets ppn (the last may get fewer); otherwise as even as
 * possible.  slots[j] > 0 bounds host j (0 = unbounded).  Hosts may get 0.
 * IBC_ERR_INVAL (with a message in err) when np does not fit. */
int ibc_launch_place(int np, int nhosts, const int *slots, int ppn, int *count,
		     char *err, size_t errlen);
/* Node holding rank r given start[] (nnodes + 1 entries, start[nnodes] = np). */
int ibc_launch_rank_node(const int *start, int nnodes, int r);

/* Hostfile: one host per line, "name", "name slots=N" or "name:N"; '#'
 * starts a comment; blank lines ignored.  Also used for --hosts items
 * ("name" or "name:N").  Returns the number of hosts or IBC_ERR_INVAL with
 * "line L: problem" in err.  names[i] are malloc'd. */
int ibc_launch_hostfile_parse(const char *text, char ***names, int **slots, char *err, size_t errlen);
int ibc_launch_host_item_parse(const char *item, char **name, int *slots);

#endif
