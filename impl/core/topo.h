/* Topology through hwloc: cores, PUs, NUMA nodes, this process's binding,
 * pinning, and oversubscription of local ranks over the PUs available. */
#ifndef IBC_CORE_TOPO_H
#define IBC_CORE_TOPO_H

struct ibc_topo_info {
	int cores;          /* physical cores in the machine */
	int pus;            /* hardware threads in the machine */
	int numa_nodes;     /* at least 1 */
	int allowed_pus;    /* PUs this process may run on (its cgroup/affinity) */
	int bound;          /* 1 when the process's binding is narrower than allowed */
	char binding[128];  /* the binding as a PU list, e.g. "0" or "0-1" */
	char cpu_model[128];
};

int ibc_topo_query(struct ibc_topo_info *out);
/* Binds the calling process to the PU with this logical index (modulo the
 * allowed PUs).  IBC_ERR_UNSUPPORTED where binding is not possible. */
int ibc_topo_pin(int pu_index);
/* The OS index of the one PU this process is bound to (its affinity allows
 * exactly one), else -1: not bound to one PU, or unknown. */
int ibc_topo_bound_pu(void);
/* 1 when local_ranks processes outnumber the PUs this process may use. */
int ibc_topo_oversubscribed(int local_ranks);

#endif
