#!/bin/sh
# ibchar accept on a synthetic results directory: absolute thresholds hold and
# fail, bounds relative to the placement probe, to the row beside it (another
# impl or variant of the same point) and to another suite's row at a size;
# mbps; a check that matches no row fails, as does a reference that names no
# row; model rows are not measurements; JUnit counts; a bad spec exits 2 with
# its line; --dry-run lists the shipped specs' checks.  End to end on shm: the
# spec's run lines run the suites, then the checks (exit 0).
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
SRC=$(cd "$(dirname "$0")/../.." && pwd)
tap_need "$IBCHAR"
tap_tmp accept
echo "1..20"
mkdir -p "$tmp/d"
cat >"$tmp/d/results.csv" <<'CSV'
run_id,suite,variant,impl,xport,launcher,nodes,ppn,ranks,bytes,fanin,iters,warmup,min_us,p50_us,mean_us,p99_us,max_us,stdev_us,ci_lo_us,ci_hi_us,skew_us,wait,oversub,probe_us,extra
r,barrier,rds,ibchar,shm,fork,1,4,4,0,,100,10,1,2.0,2,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,mpi,openmpi,shm,mpirun,1,4,4,0,,100,10,1,2.5,2,3,4,0.1,2.4,2.6,0,spin,0,0.5,
r,barrier,rgm,ibchar,shm,fork,1,4,4,0,3,100,10,1,3.0,3,3,4,0.1,2.9,3.1,0,spin,0,0.5,
r,barrier,rgm,model,shm,fork,1,4,4,0,3,1,0,,0.1,0.1,,,,,,,,0,,
r,barrier,rds,ibchar,shm,fork,1,8,8,0,,100,10,1,4.0,4,5,6,0.1,3.9,4.1,0,spin,0,0.5,
r,link,write-lat,ibchar,shm,fork,1,2,2,8,,100,10,1,0.3,0.3,1,1,0.1,0.29,0.31,0,spin,0,0.1,
r,link,write-lat,perftest,shm,fork,1,2,2,8,,1,0,,0.25,0.25,,,,,,,,0,0.1,n=1
r,link,write-bw-stream,ibchar,shm,fork,1,2,2,1048576,,100,10,1,100,100,1,1,0.1,99,101,0,spin,0,0.1,
r,alltoall,de,ibchar,shm,fork,1,4,4,1048576,,100,10,1,125,125,1,1,0.1,120,130,0,spin,0,0.1,
CSV
spec() { cat >"$tmp/s.spec"; "$IBCHAR" accept --spec "$tmp/s.spec" --junit "$tmp/j.xml" "$tmp/d" >"$tmp/out" 2>&1; }

spec <<'S'
# absolute, both ways
check barrier rds ranks=4: p50_us <= 2.5
check barrier rds ranks=8: p50_us <= 2.5
S
rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 - line 2: barrier rds (ibchar) N=4 .*p50_us = 2, bound 2.5' "$tmp/out" &&
	grep -q '^not ok 2 - line 3: barrier rds (ibchar) N=8 .*p50_us = 4, bound 2.5' "$tmp/out"
ok $? "absolute: 2 <= 2.5 holds, 4 <= 2.5 fails, exit 1 (exit $rc)"
python3 -c "
import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1]).getroot()
assert t.get('tests') == '2' and t.get('failures') == '1'
" "$tmp/j.xml"; ok $? "--junit: 2 cases, 1 failure"

spec <<'S'
check barrier rds: p50_us <= 10 * probe
S
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^ok' "$tmp/out")" -eq 2 ]; ok $? "relative to the probe, a check over every N: 2 rows, both hold (exit $rc)"
spec <<'S'
check barrier rds ranks=4: p50_us <= 1.0 * variant=mpi
check barrier rgm fanin=3: p50_us <= 1.0 * variant=mpi
check barrier rds ranks=8: p50_us <= 1.0 * variant=mpi
S
rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 .*bound 2.5 (reference measured' "$tmp/out" && grep -q '^not ok 2 - .*rgm (ibchar) .*p50_us = 3, bound 2.5' "$tmp/out" &&
	grep -q '^not ok 3 - .*rds (ibchar) N=8 .*no row with variant=mpi beside it' "$tmp/out"
ok $? "relative to variant=mpi (a fan-in row against MPI's, which has none): holds, fails; no MPI row at N=8 fails with the reason"
spec <<'S'
check link write-lat bytes=8: p50_us <= 1.1 * impl=perftest
S
rc=$?
[ $rc -eq 1 ] && grep -q 'p50_us = 0.3, bound 0.275' "$tmp/out"; ok $? "relative to impl=perftest: 0.3 > 1.1 x 0.25 fails (exit $rc)"
spec <<'S'
check alltoall de bytes=1M: mbps >= 0.8 * link.write-bw-stream at 1M
S
rc=$?
[ $rc -eq 0 ] && grep -q 'mbps = 8389, bound 8389' "$tmp/out"; ok $? "mbps relative to the link's stream at 1 MiB: 8389 >= 0.8 x 10486 (exit $rc)"
spec <<'S'
check alltoall de bytes=1M: mbps >= 0.8 * link.write-bw-stream at 4M
S
rc=$?
[ $rc -eq 1 ] && grep -q 'no link write-bw-stream row at 4194304 bytes' "$tmp/out"; ok $? "a link row at a size the run lacks: fails with the reason"
spec <<'S'
check channel piggyback: p50_us <= 1
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 - line 1: channel piggyback: p50_us <= 1: no row of the run matches' "$tmp/out"
ok $? "a check that matches no row fails, not skipped (exit $rc)"
spec <<'S'
check barrier rgm: p50_us <= 0.5
S
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'ok' "$tmp/out")" -eq 1 ] && grep -q 'rgm (ibchar)' "$tmp/out"
ok $? "model rows (impl=model) are not checked as measurements"

for s in "check barrier rds ranks=4 p50_us <= 1" "check barrier: p50_us <= 1" "check barrier rds: p99 <= 1" \
	 "check barrier rds: p50_us =< 1" "check barrier rds: p50_us <= 2 * nosuch" "bogus line"; do
	echo "$s" >"$tmp/s.spec"
	"$IBCHAR" accept --spec "$tmp/s.spec" "$tmp/d" >"$tmp/out" 2>&1; rc=$?
	[ $rc -eq 2 ] && grep -q 's.spec:1:' "$tmp/out"; ok $? "bad spec '$s': exit 2 with its line"
done
for f in softroce example-cluster; do
	"$IBCHAR" accept --spec "$SRC/accept/$f.spec" --dry-run >"$tmp/out" 2>&1; rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^check ' "$tmp/out")" -ge 7 ]
done
ok $? "accept/softroce.spec and accept/example-cluster.spec parse (--dry-run)"

# JUnit files that cannot be written: exit 2 with the reason, before anything runs
echo "check barrier rds: p50_us <= 1000" >"$tmp/s.spec"
"$IBCHAR" accept --spec "$tmp/s.spec" --junit "$tmp/nodir/j.xml" --out "$tmp/jr" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "cannot write the JUnit file $tmp/nodir/j.xml: No such file or directory" "$tmp/err" &&
	[ ! -e "$tmp/jr" ]
ok $? "--junit in a missing directory: exit 2, one line with the reason, nothing run (exit $rc)"
"$IBCHAR" accept --spec "$tmp/s.spec" --junit "$tmp" "$tmp/d" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot write the JUnit file $tmp: Is a directory" "$tmp/err"; ok $? "--junit naming a directory: exit 2 with the reason (exit $rc)"
if [ -w /dev/full ]; then
	"$IBCHAR" accept --spec "$tmp/s.spec" --junit /dev/full "$tmp/d" >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 2 ] && grep -q '^ok 1 ' "$tmp/out" && grep -q 'cannot write the JUnit file /dev/full: No space left on device' "$tmp/err"
	ok $? "--junit on a full device: the TAP, then exit 2 with the reason (exit $rc)"
else
	ok 0 "# SKIP no writable /dev/full"
fi

# end to end on shm: the run lines, then the checks
cat >"$tmp/e2e.spec" <<'S'
run probe
run barrier --ranks 2 --iters 300 --variants rpe,rds
check barrier rds ranks=2: p50_us <= 1000
check barrier rds ranks=2: p50_us <= 20 * variant=rpe
check probe probe-cross: p50_us <= 1000
S
timeout 300 "$IBCHAR" accept --spec "$tmp/e2e.spec" --out "$tmp/e2e" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^ok' "$tmp/out")" -eq 3 ] && [ -s "$tmp/e2e/results.csv" ]
ok $? "end to end: the spec's runs, then 3 checks hold (exit $rc)"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/out"; tail -5 "$tmp/err" | sed 's/^/# /'; }
