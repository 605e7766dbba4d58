#!/bin/sh
# The harness under mpirun with the MPI bootstrap: Open MPI with 2 ranks and
# 4 ranks (oversubscribed on this machine), and MPICH with 2 ranks when built
# (MPICH busy-polls: never oversubscribed).  Each run's own TAP is shown as
# diagnostics; one assertion per run: exit 0 and every check passed.
BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
OMPI_BIN=$BUILD/tests/harness/harness-openmpi
MPICH_BIN=$BUILD/tests/harness/harness-mpich
if [ ! -x "$OMPI_BIN" ]; then
	echo "1..0 # SKIP $OMPI_BIN not built (Open MPI missing?)"
	exit 0
fi
if ! command -v mpirun.openmpi >/dev/null 2>&1; then
	echo "1..0 # SKIP mpirun.openmpi not found"
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no network probing in a sandbox: shared memory and self only
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
errf=$(mktemp /tmp/ibc-mpi-t-XXXXXX)
trap 'rm -f "$errf"' EXIT
echo "1..3"
n=0
check() { # name command...
	name=$1
	shift
	n=$((n + 1))
	out=$(timeout 120 "$@" 2>"$errf")
	rc=$?
	echo "$out" | sed 's/^/# /'
	sed 's/^/# stderr: /' "$errf"
	plan=$(echo "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p' | head -n 1)
	oks=$(echo "$out" | grep -c '^ok ')
	if [ $rc -eq 0 ] && [ -n "$plan" ] && [ "$oks" -eq "$plan" ] && ! echo "$out" | grep -q '^not ok'; then
		echo "ok $n - $name: $oks/$plan harness checks pass"
	else
		echo "not ok $n - $name: exit $rc, $oks of ${plan:-?} checks pass"
	fi
}
check "mpirun.openmpi -n 2" mpirun.openmpi -n 2 "$OMPI_BIN"
check "mpirun.openmpi -n 4 --oversubscribe" mpirun.openmpi -n 4 --oversubscribe "$OMPI_BIN"
if [ -x "$MPICH_BIN" ] && command -v mpirun.mpich >/dev/null 2>&1; then
	check "mpirun.mpich -n 2" mpirun.mpich -n 2 "$MPICH_BIN"
else
	echo "ok 3 # SKIP MPICH build or mpirun.mpich missing"
fi
