#!/bin/sh
# A real MPICH program (tests/launcher/hello_mpi.c built with mpicc.mpich:
# MPI_Init, allreduce, a ring sendrecv, barrier, MPI_Finalize) runs unchanged
# under ibchar-launch over PMI-1: locally, and over 4 test hosts x 2.
. "$(dirname "$0")/lib.sh"
HELLO=$IBC_BUILD/tests/launcher/hello-mpich
[ -x "$HELLO" ] || skip_all "MPICH hello not built (mpicc.mpich missing?)"

# check <label> <n> <args...>
check() {
	label=$1; n=$2; shift 2
	"$LAUNCH" --timeout 60 "$@" -- "$HELLO" >"$TMP/out" 2>"$TMP/err"
	is "$?" 0 "$label: exit 0"
	is "$(grep -c 'allreduce ok, ring ok' "$TMP/out")" "$n" "$label: $n ranks report allreduce and ring ok"
	is "$(grep -o 'rank [0-9]* of [0-9]*' "$TMP/out" | sort -u | wc -l | tr -d ' ')" "$n" "$label: distinct ranks"
	[ -s "$TMP/err" ] && diag "$(head -5 "$TMP/err")"
}
check "local, 2 ranks" 2 -n 2
why=$(netns_why)
if [ -n "$why" ]; then
	skip "4 test hosts: $why"
elif hosts_up 4; then
	H=ibc-h1,ibc-h2,ibc-h3,ibc-h4
	check "4 hosts x 2, tree" 8 -n 8 --hosts $H --ppn 2 --rsh 'ip netns exec {host}'
	check "4 hosts x 2, flat" 8 -n 8 --hosts $H --ppn 2 --rsh 'ip netns exec {host}' --mode flat
	check "4 hosts x 2, tree, hcmab" 8 -n 8 --hosts $H --ppn 2 --rsh 'ip netns exec {host}' --cache hcmab
	sleep 0.2
	is "$(agents_left)" 0 "no node agent left"
else
	ok 1 "scripts/testhosts up 4"
fi
done_testing
