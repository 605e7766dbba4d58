/* Topology through hwloc.  See core/topo.h.
 *
 * Loading a topology is slow (tens of ms), so one is kept per process.  It is
 * tagged with the pid that loaded it: a forked child notices the pid changed
 * and loads its own (the inherited copy is destroyed in the child only). */
#define _GNU_SOURCE
#include "core/topo.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t topo_atfork_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topo;
static pid_t topo_pid;

/* A child of a multithreaded parent may inherit the lock held. */
static void topo_atfork_child(void)
{
	pthread_mutex_init(&topo_lock, NULL);
}

static void topo_atfork_register(void)
{
	pthread_atfork(NULL, NULL, topo_atfork_child);
}

/* Returns the loaded topology of this process with topo_lock held, or NULL
 * (lock released, error logged). */
static hwloc_topology_t topo_get_locked(void)
{
	hwloc_topology_t t;
	pid_t pid = getpid();

	pthread_once(&topo_atfork_once, topo_atfork_register);
	pthread_mutex_lock(&topo_lock);
	if (topo && topo_pid == pid)
		return topo;
	if (topo) {
		hwloc_topology_destroy(topo);
		topo = NULL;
	}
	if (hwloc_topology_init(&t) != 0) {
		ibc_error("topo: hwloc_topology_init failed: %s", strerror(errno));
		goto err_unlock;
	}
	/* keep PUs outside our cgroup so pus/cores describe the machine; the
	 * allowed set is queried separately */
	if (hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0)
		ibc_debug("topo: cannot include disallowed PUs: %s", strerror(errno));
	if (hwloc_topology_load(t) != 0) {
		ibc_error("topo: hwloc_topology_load failed: %s", strerror(errno));
		goto err_destroy;
	}
	topo = t;
	topo_pid = pid;
	return topo;

err_destroy:
	hwloc_topology_destroy(t);
err_unlock:
	pthread_mutex_unlock(&topo_lock);
	return NULL;
}

static void topo_put(void)
{
	pthread_mutex_unlock(&topo_lock);
}

/* PUs of the topology that this process may use (cgroup cpuset). */
static hwloc_const_cpuset_t allowed_set(hwloc_topology_t t)
{
	hwloc_const_cpuset_t s = hwloc_topology_get_allowed_cpuset(t);

	return s ? s : hwloc_topology_get_topology_cpuset(t);
}

static int allowed_count(hwloc_topology_t t)
{
	return hwloc_get_nbobjs_inside_cpuset_by_type(t, allowed_set(t), HWLOC_OBJ_PU);
}

static void cpu_model_read(hwloc_topology_t t, char *buf, size_t len)
{
	const char *model = NULL;
	hwloc_obj_t obj;
	FILE *fp;
	char line[512];

	obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
	if (obj)
		model = hwloc_obj_get_info_by_name(obj, "CPUModel");
	if (!model)
		model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "CPUModel");
	if (model && *model) {
		snprintf(buf, len, "%s", model);
		return;
	}
	snprintf(buf, len, "unknown");
	fp = fopen("/proc/cpuinfo", "r");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *colon = strchr(line, ':');

		if (!colon || (strncmp(line, "model name", 10) != 0 &&
			       strncmp(line, "Processor", 9) != 0 && strncmp(line, "cpu\t", 4) != 0))
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		if (*colon) {
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(fp);
}

int ibc_topo_query(struct ibc_topo_info *out)
{
	hwloc_topology_t t;
	hwloc_bitmap_t bind;
	hwloc_const_cpuset_t allowed;
	int n, status = IBC_OK;

	memset(out, 0, sizeof(*out));
	t = topo_get_locked();
	if (!t)
		return IBC_ERR_SYS;

	n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	out->pus = n > 0 ? n : 1;
	n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	out->cores = n > 0 ? n : out->pus;
	n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	out->numa_nodes = n > 0 ? n : 1;
	out->allowed_pus = allowed_count(t);
	if (out->allowed_pus <= 0)
		out->allowed_pus = out->pus;
	cpu_model_read(t, out->cpu_model, sizeof(out->cpu_model));

	allowed = allowed_set(t);
	bind = hwloc_bitmap_alloc();
	if (!bind) {
		ibc_error("topo: out of memory");
		status = IBC_ERR_NOMEM;
		goto unlock_topo;
	}
	if (hwloc_get_cpubind(t, bind, HWLOC_CPUBIND_PROCESS) != 0 &&
	    hwloc_get_cpubind(t, bind, HWLOC_CPUBIND_THREAD) != 0) {
		/* no binding support: report the allowed set, unbound */
		ibc_debug("topo: cannot read the binding: %s", strerror(errno));
		hwloc_bitmap_copy(bind, allowed);
	}
	hwloc_bitmap_list_snprintf(out->binding, sizeof(out->binding), bind);
	out->bound = hwloc_bitmap_isincluded(allowed, bind) ? 0 : 1;
	hwloc_bitmap_free(bind);

unlock_topo:
	topo_put();
	return status;
}

int ibc_topo_pin(int pu_index)
{
	const struct hwloc_topology_support *sup;
	hwloc_topology_t t;
	hwloc_const_cpuset_t allowed;
	hwloc_obj_t pu;
	int n, want, status = IBC_OK;

	if (pu_index < 0) {
		ibc_error("topo: cannot pin to PU index %d", pu_index);
		return IBC_ERR_INVAL;
	}
	t = topo_get_locked();
	if (!t)
		return IBC_ERR_SYS;
	sup = hwloc_topology_get_support(t);
	if (!sup->cpubind->set_thisproc_cpubind && !sup->cpubind->set_thisthread_cpubind) {
		ibc_warn("topo: binding is not supported here");
		status = IBC_ERR_UNSUPPORTED;
		goto unlock_topo;
	}
	allowed = allowed_set(t);
	n = hwloc_get_nbobjs_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_PU);
	if (n <= 0) {
		ibc_error("topo: no PU is available to this process");
		status = IBC_ERR_UNSUPPORTED;
		goto unlock_topo;
	}
	want = pu_index % n;
	pu = hwloc_get_obj_inside_cpuset_by_type(t, allowed, HWLOC_OBJ_PU, (unsigned)want);
	if (!pu) {
		ibc_error("topo: PU %d of %d not found", want, n);
		status = IBC_ERR_NOTFOUND;
		goto unlock_topo;
	}
	if (hwloc_set_cpubind(t, pu->cpuset, HWLOC_CPUBIND_PROCESS) != 0 &&
	    hwloc_set_cpubind(t, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
		int err = errno;

		ibc_error("topo: binding to PU L#%d (P#%u) failed: %s", want, pu->os_index,
			  strerror(err));
		status = err == ENOSYS || err == EXDEV ? IBC_ERR_UNSUPPORTED : IBC_ERR_SYS;
		goto unlock_topo;
	}
	ibc_debug("topo: pinned to PU L#%d (P#%u)", want, pu->os_index);

unlock_topo:
	topo_put();
	return status;
}

int ibc_topo_bound_pu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1)
		return -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return -1;
}

int ibc_topo_oversubscribed(int local_ranks)
{
	hwloc_topology_t t;
	int n;

	t = topo_get_locked();
	if (!t) {
		/* cannot tell: assume the worst, spinning would be catastrophic */
		return 1;
	}
	n = allowed_count(t);
	topo_put();
	if (n <= 0)
		n = 1;
	return local_ranks > n;
}
