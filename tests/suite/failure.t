#!/bin/sh
# A failure in the extra phase (the back-to-back loop, the counters) fails
# the run at once: injected with IBC_FAULT on one rank, the bench exits
# non-zero well before the 60 s deadline of some peer's wait or of a
# collective teardown (within 20 s: ~1 s idle, 5-8 s beside two busy loops,
# where the run up to the fault is itself slower), says which rank failed
# where, and leaves no process behind; under the fork bootstrap,
# ibchar-launch and mpirun.
. "$(dirname "$0")/../lib/tap.sh"
BIN=$BUILD/bin/ibchar-barrier
LAUNCH=$BUILD/bin/ibchar-launch
tap_need "$BUILD/bin/ibchar-barrier"
tap_tmp fail
ms() { date +%s%3N; }
echo "1..15"

# $1 = label, $2 = fault, then the command; checks exit, time, message, leftovers
case_run() {
	label=$1 fault=$2
	shift 2
	t0=$(ms)
	IBC_FAULT=$fault timeout 60 "$@" >/dev/null 2>"$tmp/err"; rc=$?
	dt=$(($(ms) - t0))
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $dt -lt 20000 ]
	ok $? "$label: IBC_FAULT=$fault: exit $rc after $dt ms (non-zero, before any deadline: < 20 s)"
	[ $rc -ne 0 ] && [ $dt -lt 20000 ] || sed 's/^/# /' "$tmp/err" | tail -8
	where=${fault%%:*}
	grep -q "IBC_FAULT: rank [0-9]* fails at $where" "$tmp/err"; ok $? "$label: ... the failing rank says where"
	sleep 0.3
	left=$(pgrep -f -- "--out $tmp/" | wc -l)
	[ "$left" -eq 0 ]; ok $? "$label: ... no process left behind ($left)"
	pkill -9 -f -- "--out $tmp/" 2>/dev/null || true
}

case_run "fork, a peer fails in the paper loop" b2b:1:300 \
	"$BIN" --ranks 3 --variants rds --iters 200 --xport shm --out "$tmp/a"
case_run "fork, rank 0 fails in the paper loop" b2b:0:300 \
	"$BIN" --ranks 3 --variants rds,rpe --iters 200 --xport shm --out "$tmp/b"
case_run "fork, a peer fails summing RGM's counters" counters:2 \
	"$BIN" --ranks 3 --variants rgm --fanin 1 --iters 200 --xport shm --out "$tmp/c"
if [ -x "$LAUNCH" ]; then
	case_run "ibchar-launch, a peer fails in the paper loop" b2b:1:300 \
		"$LAUNCH" -n 3 -- "$BIN" --ranks 3 --variants rds --iters 200 --xport shm --out "$tmp/d"
else
	for i in 1 2 3; do n=$((n + 1)); echo "ok $n # SKIP ibchar-launch not built"; done
fi
MPIBIN=$BUILD/bin/ibchar-barrier-openmpi
if [ -x "$MPIBIN" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	case_run "mpirun.openmpi, a peer fails in the paper loop" b2b:1:300 \
		mpirun.openmpi --oversubscribe -n 3 -x IBC_FAULT "$MPIBIN" --variants rds,mpi --iters 200 \
		--xport shm --out "$tmp/e"
else
	for i in 1 2 3; do n=$((n + 1)); echo "ok $n # SKIP no Open MPI build"; done
fi
exit 0
