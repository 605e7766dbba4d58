#!/bin/sh
# tests/runner/deadline.t - `ibchar run --timeout`: a bench that hangs after
# its first point (IBC_FAULT=hang:1:2, rank 1 stops at point 2) is ended at
# the deadline under each launcher (fork, tree, mpirun, and srun when
# slurm-local can run): the run ends, the row of the finished point is
# kept, the message names the launch and the deadline and rank 1 as the rank
# that did not answer (from the ranks' progress records), no process of the
# run is left and no ibchar name of a gone process is left in /dev/shm.
# Then ^C: passed on to a hanging launch the same way, under the deadline
# derived from the budget, which each launch states.
# The deadline (40 s; srun's 15 s, as it long was) leaves a loaded machine
# time to start the 3 ranks and run the first point (10 iterations and 2
# of warm-up): beside two busy loops on 2 PUs, a run of that point alone
# under the tree launcher took 21-23 s, 20 of them before its first row,
# and at 15 s the ranks were still starting; srun's case passed there at
# 15 s, and once failed its scancel check in a fresh-clone CI run at 40 s
# (not understood); what is asserted is what the runner decided, not how
# fast it was.  srun's blame check failed once more in a fresh-clone CI
# run (twelve passes of the case beside two busy loops, and the runner
# tests in order, did not fail): a failed run or blame check prints the
# run's stderr, so the next failure says what the runner saw.  --sync
# barrier: IBC_FAULT counts variant setups, and a loaded machine can make
# window mode measure a point again (a second setup), which would move the
# hang into point 1.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR" "$BUILD/bin/ibchar-alltoall"
tap_tmp deadline
echo "1..27"

# $1 = launcher; the rest: extra options of ibchar run
hang_case() {
	l=$1
	dl=40
	[ "$l" = srun ] && dl=15
	shift
	ls /dev/shm | sort >"$tmp/shm0"
	out=$tmp/$l
	t0=$(date +%s)
	IBC_FAULT=hang:1:2 timeout 120 "$IBCHAR" run alltoall --launcher "$l" --ranks 3 --variants pairwise \
		--sizes 8,64,512 --iters 10 --warmup 2 --sync barrier --timeout $dl --out "$out" "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	dt=$(($(date +%s) - t0))
	rows=$(awk -F, 'NR > 1' "$out/results.csv" 2>/dev/null | wc -l)
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$rows" -eq 1 ]
	ok $? "$l: the run ends (exit $rc, ${dt} s, the outer timeout 124 not reached), the row of point 1 kept ($rows)"
	grep -q "alltoall at 3 ranks (launcher $l): no new row for $dl s (--timeout $dl): ending it" "$tmp/err" &&
		grep -q "ended; the rows of its finished points are kept" "$tmp/err"
	ok $? "$l: ... the message names the launch and its deadline"
	grep -q "(launcher $l): rank 1 (pid [0-9]* on .*) did not answer: it never entered its bootstrap collective" \
		"$tmp/err" && grep -q "(launcher $l): ranks 0, 2 wait in their bootstrap collective" "$tmp/err" &&
		! grep -q "rank [02] (pid [0-9]* on .*) did not answer" "$tmp/err"
	blamed=$?
	ok $blamed "$l: ... rank 1 is named as the rank that did not answer, ranks 0 and 2 as waiting for it"
	[ $rc -ne 0 ] && [ "$rows" -eq 1 ] && [ $blamed -eq 0 ] || tail -20 "$tmp/err" | diag
	sleep 1
	left=$(pgrep -f -- "--out $out" | wc -l)
	[ "$left" -eq 0 ]; ok $? "$l: ... no process of the run left ($left)"
	pkill -9 -f -- "--out $out" 2>/dev/null
	# ibchar's own names left by a process that is gone (other jobs on this
	# machine make and remove theirs meanwhile)
	ls /dev/shm | sort | comm -13 "$tmp/shm0" - | while read -r f; do
		p=$(echo "$f" | sed -n 's/^ibcx-\([0-9]*\)-.*/\1/p; s/^ibchar-[a-z]*-\([0-9]*\)-.*/\1/p')
		[ -n "$p" ] && ! kill -0 "$p" 2>/dev/null && echo "$f"
	done >"$tmp/shmnew"
	[ ! -s "$tmp/shmnew" ]; ok $? "$l: ... no ibchar name of the run left in /dev/shm ($(tr '\n' ' ' <"$tmp/shmnew"))"
}

hang_case fork --xport shm
if [ -x "$BUILD/bin/ibchar-launch" ]; then
	hang_case tree --xport shm
else
	for _ in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # SKIP ibchar-launch not built"; done
fi
if [ -x "$BUILD/bin/ibchar-alltoall-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	hang_case mpirun --xport shm --mpi openmpi
else
	for _ in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # SKIP no Open MPI build"; done
fi

# ^C on `ibchar run` (SIGINT to the runner: its launch has a process group
# of its own, so the terminal's ^C reaches the runner only) under the
# derived deadline: the budget's 0.5 s gives 3 x 0.5 + 60 = 61.5 s
out=$tmp/int
IBC_FAULT=hang:1:2 "$IBCHAR" run alltoall --launcher fork --ranks 3 --variants pairwise --sizes 8,64,512 \
	--iters 50 --budget 0.5 --sync barrier --xport shm --out "$out" >/dev/null 2>"$tmp/err" &
pid=$!
# ^C once ranks 0 and 2 wait in a bootstrap collective: their progress
# records (core/progress.h: magic, pid, collectives entered, left) say so
waits() {
	set -- $(od -A n -t u4 -j $(($2 * 128)) -N 16 "$1" 2>/dev/null)
	[ "${1:-0}" = 1768055664 ] && [ "$3" != "$4" ]
}
i=0
while [ $i -lt 600 ] && ! { grep -q "hangs at point 2" "$tmp/err" && waits "$out/.ranks-0" 0 &&
	waits "$out/.ranks-0" 2; }; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
rows=$(awk -F, 'NR > 1' "$out/results.csv" 2>/dev/null | wc -l)
grep -q "alltoall at 3 ranks (launcher fork): deadline 61.5 s without a new row (3 x the 0.5 s budget + 60 s; --timeout sets it)" "$tmp/err"
ok $? "^C: the launch states its deadline, derived from the budget (3 x 0.5 s + 60 s)"
grep -q "(launcher fork): interrupted (Interrupt): ending it" "$tmp/err" && [ $rc -ne 0 ] && [ "$rows" -eq 1 ]
ok $? "^C: the launch is ended as interrupted (exit $rc), the row of point 1 kept ($rows)"
[ $rc -ne 0 ] && [ "$rows" -eq 1 ] || tail -8 "$tmp/err" | diag
grep -q "(launcher fork): rank 1 (pid [0-9]* on .*) did not answer" "$tmp/err"
ok $? "^C: ... and says which rank did not answer"
sleep 1
left=$(pgrep -f -- "--out $out" | wc -l)
[ "$left" -eq 0 ]; ok $? "^C: no process of the run left ($left)"
pkill -9 -f -- "--out $out" 2>/dev/null
# no --budget: the bench's default 10 s, so 90 s
"$IBCHAR" run alltoall --launcher fork --ranks 2 --variants pairwise --sizes 8 --iters 5 --xport shm \
	--out "$tmp/def" >/dev/null 2>"$tmp/err"
grep -q "alltoall at 2 ranks (launcher fork): deadline 90 s without a new row (3 x the 10 s budget + 60 s; --timeout sets it)" "$tmp/err"
ok $? "no --budget: the deadline is 3 x the default 10 s budget + 60 s"

# srun in slurm-local: its own cluster, brought up for this case and taken down
SL=$(cd "$(dirname "$0")/../../scripts" && pwd)/slurm-local
why=
[ "$(id -u)" = 0 ] || why="needs root (slurm-local)"
for c in slurmctld slurmd srun munged ip nsenter unshare; do
	[ -n "$why" ] || command -v "$c" >/dev/null 2>&1 || why="$c missing (scripts/install-deps.sh)"
done
[ -n "$why" ] || [ ! -e /run/ibchar/slurm ] || why="a slurm-local cluster is up already (not this test's to take down)"
if [ -z "$why" ]; then
	hosts_mine=1
	ip netns list 2>/dev/null | grep -q '^ibc-h1\b' && hosts_mine=0
	trap '"$SL" down >/dev/null 2>&1; [ "$hosts_mine" = 1 ] && "$(dirname "$SL")/testhosts" down >/dev/null 2>&1; rm -rf "$tmp"' EXIT
	if "$SL" up 1 >"$tmp/up" 2>&1; then
		export SLURM_CONF=/run/ibchar/slurm/slurm.conf
		hang_case srun --xport shm
		# the node's own /dev/shm and tasks: none left in the step's place
		left=$(squeue -h -s 2>/dev/null | wc -l)
		[ "$left" -eq 0 ]; ok $? "srun: ... no Slurm step left ($left): the runner cancelled it"
		grep -q "ending it (scancel of its Slurm step)" "$tmp/err" && ! grep -q "no Slurm step named" "$tmp/err"
		ok $? "srun: ... ended by scancel of its step (found by its --job-name), not by killing srun"
	else
		why="slurm-local up 1 failed: $(tail -1 "$tmp/up")"
	fi
fi
if [ -n "$why" ]; then
	for _ in 1 2 3 4 5 6 7; do n=$((n + 1)); echo "ok $n # SKIP $why"; done
fi
