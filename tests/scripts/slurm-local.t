#!/bin/sh
# tests/scripts/slurm-local.t - scripts/slurm-local: a real Slurm (munged,
# slurmctld, one slurmd per network-namespace test host) comes up from
# Debian's packages; srun spreads tasks over separate hosts; an MPICH
# program under srun --mpi=pmi2 and an Open MPI one under --mpi=pmix see
# every rank and the right size, and the wrong plugin's singletons are told
# apart; ibchar's PMI-2 bootstrap (tests/boot/pmi2.c --live) on 2 hosts,
# in block and cyclic placement; `ibchar run barrier --launcher srun` (the
# plain build over PMI-2, and MPICH's); ibchar-launch inside salloc, its
# node agents started by srun on the allocation's hosts, running MPICH over
# its PMI-1; the launch suite's srun rows; a rank killed under srun ends the
# job quickly with a failure and leaves no process behind; down stops
# everything it started and nothing else: a munged and a process named
# slurmstepd started beside it by this test keep running; a failure injected
# halfway through `up` (IBC_SLURM_LOCAL_FAIL) leaves nothing of it running.  Root only (network namespaces, daemons); skipped with the
# reason otherwise.
. "$(dirname "$0")/../lib/tap.sh"
SL=$(cd "$(dirname "$0")/../../scripts" && pwd)/slurm-local
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root (network namespaces, Slurm daemons)"; exit 0; }
for c in slurmctld slurmd srun munged ip nsenter unshare; do
	command -v "$c" >/dev/null 2>&1 || { echo "1..0 # SKIP $c missing (scripts/install-deps.sh)"; exit 0; }
done
tap_need "$BUILD/tests/launcher/hello-mpich" "$BUILD/tests/boot/pmi2.t" "$BUILD/bin/ibchar"
tap_tmp slurm
# results the nodes write must be outside /tmp: each node has its own
mkdir -p /run/ibchar
res=$(mktemp -d /run/ibchar/slurm-test-XXXXXX)
# slurm-local down keeps the test hosts; take them down too when this test
# made them (a later test finding them would leave them, grown, behind)
hosts_mine=1
ip netns list 2>/dev/null | grep -q '^ibc-h1\b' && hosts_mine=0
# bystanders, as on a machine with its own munge and Slurm: the system's
# munged (on its default socket and pid file, the ones the old slurm-local
# took for its own; this test starts one there when none runs) and a process
# named slurmstepd
by_munged=
if [ -f /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
	by_munged=$(cat /run/munge/munged.pid)
	by_mine=0
elif [ -s /etc/munge/munge.key ]; then
	mkdir -p /run/munge && mkdir -m 0700 "$tmp/bym" &&
		munged -f --log-file="$tmp/bym/log" --seed-file="$tmp/bym/seed" 2>"$tmp/bym/err" &&
		by_munged=$(cat /run/munge/munged.pid 2>/dev/null)
	by_mine=1
fi
cp "$(command -v sleep)" "$tmp/slurmstepd"
"$tmp/slurmstepd" 600 &
by_step=$!
trap '"$SL" down >/dev/null 2>&1; kill $by_step 2>/dev/null
	[ "${by_mine:-0}" = 1 ] && kill "$by_munged" 2>/dev/null
	[ "$hosts_mine" = 1 ] && "$(dirname "$SL")/testhosts" down >/dev/null 2>&1; rm -rf "$tmp" "$res"' EXIT
echo "1..18"
export SLURM_CONF=/run/ibchar/slurm/slurm.conf

"$SL" up 2 >"$tmp/up" 2>&1; rc=$?
[ $rc -eq 0 ] && [ "$(sinfo -h -N -t idle -o %N | wc -l)" -eq 2 ]
ok $? "slurm-local up 2: two idle nodes (exit $rc)"
[ $rc -eq 0 ] || diag < "$tmp/up"

# shellcheck disable=SC2016
timeout 60 srun -N2 --ntasks-per-node=2 sh -c 'ip -4 -o addr show eth0 | awk "{print \$4}"' \
	>"$tmp/addr" 2>&1
[ "$(sort -u "$tmp/addr" | wc -l)" -eq 2 ] && [ "$(wc -l <"$tmp/addr")" -eq 4 ]
ok $? "srun -N2 --ntasks-per-node=2: four tasks on two hosts ($(sort -u "$tmp/addr" | tr '\n' ' '))"

# rank r of size s, every rank once, all "ok"; else "singletons" when every
# process was rank 0 of 1
ranks() { # FILE N
	awk -v n="$2" '/^hello from rank/ { seen[$4] = 1; if ($6 != n || $0 !~ /allreduce ok, ring ok/) bad = 1
			if ($6 == 1) single++; c++ }
		END { for (r = 0; r < n; r++) if (!(r in seen)) bad = 1
		      if (single == c && c > 1) { print "singletons"; exit 1 }
		      exit bad || c != n }' "$1"
}
timeout 120 srun -N2 -n4 --mpi=pmi2 "$BUILD/tests/launcher/hello-mpich" >"$tmp/pmi2" 2>&1
rc=$?
ranks "$tmp/pmi2" 4; ok $? "MPICH under srun --mpi=pmi2: ranks 0..3 of 4, allreduce and ring ok (exit $rc)"
timeout 120 srun -N2 -n4 --mpi=none "$BUILD/tests/launcher/hello-mpich" >"$tmp/none" 2>&1
[ "$(ranks "$tmp/none" 4)" = singletons ]
ok $? "... --mpi=none starts 4 singletons, and the check says so"

if [ -x "$BUILD/tests/launcher/hello-openmpi" ]; then
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 \
		srun -N2 -n4 --mpi=pmix "$BUILD/tests/launcher/hello-openmpi" >"$tmp/pmix" 2>&1
	ranks "$tmp/pmix" 4; ok $? "Open MPI under srun --mpi=pmix: ranks 0..3 of 4"
else
	echo "ok 5 # SKIP no Open MPI build"
	n=$((n + 1))
fi

for dist in block cyclic; do
	timeout 120 srun -N2 -n5 --distribution=$dist --mpi=pmi2 "$BUILD/tests/boot/pmi2.t" --live \
		>"$tmp/live" 2>&1
	[ "$(grep -c '^ok ' "$tmp/live")" -eq 6 ] && ! grep -q '^not ok' "$tmp/live"
	ok $? "ibchar's pmi2 bootstrap on 2 hosts, 5 ranks, $dist: collectives, node ids, local ranks"
	grep -v '^ok\|^1\.\.' "$tmp/live" | diag
done

timeout 300 "$BUILD/bin/ibchar" run barrier --launcher srun --ranks 2,4 --iters 100 --xport shm \
	--out "$res/a" >"$tmp/sum" 2>"$tmp/err"
rc=$?
c=$(awk -F, 'NR > 1 && $2 == "barrier" && $6 == "srun" { n++ } END { print n + 0 }' "$res/a/results.csv" 2>/dev/null)
[ $rc -eq 0 ] && [ "$c" -eq 11 ]
ok $? "ibchar run barrier --launcher srun: every variant at N = 2, 4 over PMI-2 ($c rows, exit $rc)"
[ $rc -eq 0 ] || tail -5 "$tmp/err" | diag
if [ -x "$BUILD/bin/ibchar-barrier-mpich" ]; then
	timeout 300 "$BUILD/bin/ibchar" run barrier --launcher srun --mpi mpich --ranks 2 --iters 100 \
		--xport shm --out "$res/b" >"$tmp/sum" 2>"$tmp/err"
	rc=$?
	c=$(grep -c ',barrier,mpi[-a-z]*,mpich,[a-z]*,srun,' "$res/b/results.csv" 2>/dev/null)
	[ $rc -eq 0 ] && [ "$c" -eq 3 ]; ok $? "... --mpi mpich: MPI_Barrier, MPI-PE, MPI-DS under srun ($c rows)"
else
	n=$((n + 1))
	echo "ok $n # SKIP no MPICH build"
fi

# ibchar-launch inside an allocation: hosts, slots and srun-started agents from Slurm
# shellcheck disable=SC2016
timeout 120 salloc -N2 -n4 "$BUILD/bin/ibchar-launch" -- sh -c 'ip -4 -o addr show eth0 | awk "{print \$4}"' \
	>"$tmp/la" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^10\.77\.0\.' "$tmp/la")" -eq 4 ] && [ "$(grep '^10\.77' "$tmp/la" | sort -u | wc -l)" -eq 2 ]
ok $? "ibchar-launch inside salloc -N2 -n4: 4 processes on the 2 hosts of the allocation (exit $rc)"
[ $rc -eq 0 ] || tail -5 "$tmp/la" | diag
timeout 120 salloc -N2 -n4 "$BUILD/bin/ibchar-launch" -- "$BUILD/tests/launcher/hello-mpich" >"$tmp/lm" 2>&1
ranks "$tmp/lm" 4; ok $? "... MPICH under it (PMI-1 of ibchar-launch): ranks 0..3 of 4"

# the launch suite's srun rows: PMI-2 (probe, MPICH hello) and PMIx (Open MPI
# hello) across the 2 hosts, beside ibchar-launch's tree
timeout 300 "$BUILD/bin/ibchar" run launch --hosts 2 --ppn 2 --variants tree,srun,srun-pmix --iters 2 \
	--out "$res/launch" >"$tmp/ls" 2>&1
rc=$?
c=$(grep -c ',launch,srun[-a-z]*:[a-z]*:[a-z]*,slurm,.*hosts=2' "$res/launch/results.csv" 2>/dev/null)
want=8
[ -x "$BUILD/bin/ibchar-launch-hello-openmpi" ] && want=$((want + 5))
[ -x "$BUILD/bin/ibchar-launch-hello-mpich" ] || want=$((want - 3))
[ $rc -eq 0 ] && [ "$c" -eq $want ]
rows_ok=$?
ok $rows_ok "ibchar run launch --hosts 2 --variants tree,srun,srun-pmix: $c of $want srun rows over 2 hosts (exit $rc)"
if [ $rows_ok -ne 0 ]; then
	tail -12 "$tmp/ls" | diag
	cut -d, -f3,4,6 "$res/launch/results.csv" 2>/dev/null | sed 's/^/# row: /'
fi

# rank 2 kills itself; the others would sleep for a minute
t0=$(date +%s)
# shellcheck disable=SC2016
timeout 120 srun -N2 -n4 sh -c '[ "$SLURM_PROCID" = 2 ] && kill -9 $$; exec sleep 61' \
	>"$tmp/kill" 2>&1
rc=$?
t=$(($(date +%s) - t0))
[ $rc -ne 0 ] && [ $t -lt 30 ]; ok $? "a rank killed under srun fails the job (exit $rc) in ${t} s"
sleep 1
! pgrep -f 'sleep 61' >/dev/null; ok $? "... and leaves no task behind"

"$SL" down >/dev/null 2>&1
! pgrep -x slurmd >/dev/null && ! pgrep -x slurmctld >/dev/null && [ ! -e /run/ibchar/slurm ]
ok $? "slurm-local down: no daemon, no state left"
[ -n "$by_munged" ] && kill -0 "$by_munged" && kill -0 "$by_step" && [ "$(cat /proc/$by_step/comm)" = slurmstepd ]
ok $? "... and the bystanders live: the system munged (pid ${by_munged:-none}), a slurmstepd (pid $by_step)"

# a failure halfway through up: after the controller and the first slurmd
IBC_SLURM_LOCAL_FAIL=slurmd "$SL" up 2 >"$tmp/fail" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'IBC_SLURM_LOCAL_FAIL=slurmd' "$tmp/fail" && grep -q 'up failed: stopping' "$tmp/fail"
ok $? "a failure injected after the first slurmd started fails up (exit $rc) and says so"
sleep 0.5
! pgrep -f /run/ibchar/slurm >/dev/null && [ ! -e /run/ibchar/slurm ] && kill -0 "$by_munged" && kill -0 "$by_step"
ok $? "... and nothing of slurm-local runs: no munged, slurmctld or slurmd of its own, no state; the bystanders live"
