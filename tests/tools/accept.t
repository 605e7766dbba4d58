#!/bin/sh
# ibchar accept.  On synthetic results directories: absolute thresholds hold
# and fail, bounds relative to the placement probe, to the row beside it
# (another impl or variant of the same point, in the same run) and to another
# suite's row at a size (at the checked row's N and transport unless the spec
# names them), each TAP line naming the reference row; a check that matches
# no row fails, as does a reference that names no row or several; model rows
# are not measurements; a time that is not a number >= 0 is damaged input
# (exit 2); a directory of several runs: every run checked, a reference from
# the row's own run, --run-id picks; JUnit counts, and a JUnit file that
# cannot be written exits 2 with the reason; a bad spec exits 2 with its line.
# With a stand-in bench (a copy of ibchar beside a script): the rows a spec's
# run lines wrote are the only rows checked, even when older rows of DIR
# share their run_id; a failed run line is not ok with its exit status and
# error line; --dry-run (and every run, first) refuses a run line with an
# unknown variant, suite or a bad option, by its line, running nothing.  The
# shipped specs pass --dry-run.  End to end on shm: the spec's run lines run
# the suites, then the checks (exit 0), and beside Open MPI's barrier when
# its build is here.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
SRC=$(cd "$(dirname "$0")/../.." && pwd)
tap_need "$IBCHAR"
tap_tmp accept
echo "1..55"
HDR=run_id,suite,variant,impl,xport,launcher,nodes,ppn,ranks,bytes,fanin,iters,warmup,min_us,p50_us,mean_us,p99_us,max_us,stdev_us,ci_lo_us,ci_hi_us,skew_us,wait,oversub,probe_us,extra
mkdir -p "$tmp/d"
cat >"$tmp/d/results.csv" <<CSV
$HDR
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
# spec [DIR [ARGS...]]: the spec from stdin, checked against DIR (default d)
spec() {
	d=${1:-$tmp/d}
	[ $# -gt 0 ] && shift
	cat >"$tmp/s.spec"
	"$IBCHAR" accept --spec "$tmp/s.spec" --junit "$tmp/j.xml" "$@" "$d" >"$tmp/out" 2>"$tmp/err"
}
show() { sed 's/^/# /' "$tmp/out" "$tmp/err"; }

spec <<'S'
# absolute, both ways
check barrier rds ranks=4: p50_us <= 2.5
check barrier rds ranks=8: p50_us <= 2.5
S
rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 - line 2: barrier rds (ibchar) shm N=4 bytes=0: p50_us <= 2.5: p50_us = 2, bound 2.5$' "$tmp/out" &&
	grep -q '^not ok 2 - line 3: barrier rds (ibchar) shm N=8 .*p50_us = 4, bound 2.5' "$tmp/out"
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
[ $rc -eq 0 ] && [ "$(grep -c '^ok' "$tmp/out")" -eq 2 ] && grep -q "bound 5 = 10 x the row's probe_us 0.5" "$tmp/out"
ok $? "relative to the probe, a check over every N: 2 rows, both hold (exit $rc)"
spec <<'S'
check barrier rds ranks=4: p50_us <= 1.0 * variant=mpi
check barrier rgm fanin=3: p50_us <= 1.0 * variant=mpi
check barrier rds ranks=8: p50_us <= 1.0 * variant=mpi
S
rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 .*bound 2.5 = 1 x 2.5, the p50_us of barrier mpi (openmpi) shm N=4 bytes=0$' "$tmp/out" &&
	grep -q '^not ok 2 - .*rgm (ibchar) .*p50_us = 3, bound 2.5' "$tmp/out" &&
	grep -q '^not ok 3 - .*rds (ibchar) shm N=8 .*no row with variant=mpi beside it' "$tmp/out"
ok $? "relative to variant=mpi (a fan-in row against MPI's, which has none): holds, fails; no MPI row at N=8 fails with the reason"
spec <<'S'
check link write-lat bytes=8: p50_us <= 1.1 * impl=perftest
S
rc=$?
[ $rc -eq 1 ] && grep -q 'p50_us = 0.3, bound 0.275 = 1.1 x 0.25, the p50_us of link write-lat (perftest) shm N=2 bytes=8' "$tmp/out"
ok $? "relative to impl=perftest: 0.3 > 1.1 x 0.25 fails, naming the perftest row (exit $rc)"
spec <<'S'
check barrier rds ranks=4: p50_us <= 1.0 * impl=openmpi
S
rc=$?
[ $rc -eq 1 ] && grep -q "^not ok 1 .*no row with impl=openmpi beside it.*openmpi's rows there are variant mpi (variant=X names one)" "$tmp/out"
ok $? "impl=openmpi beside an ibchar variant: no such row, and the MPI's variants named (exit $rc)"
spec <<'S'
check alltoall de bytes=1M: mbps >= 0.8 * link.write-bw-stream at 1M ranks=2
S
rc=$?
[ $rc -eq 0 ] && grep -q 'mbps = 8389, bound 8389 = 0.8 x 1.049e+04, the mbps of link write-bw-stream (ibchar) shm N=2 bytes=1048576' "$tmp/out"
ok $? "mbps relative to the link's stream at 1 MiB, N = 2 named: 8389 >= 0.8 x 10486, the link row named (exit $rc)"
spec <<'S'
check alltoall de bytes=1M: mbps >= 0.8 * link.write-bw-stream at 1M
S
rc=$?
[ $rc -eq 1 ] && grep -q 'no link write-bw-stream row at 1048576 bytes with N=4 on shm in the runs checked' "$tmp/out"
ok $? "the link row is at N = 2, the checked row at N = 4: no reference unless the spec names ranks=2 (exit $rc)"
spec <<'S'
check alltoall de bytes=1M: mbps >= 0.8 * link.write-bw-stream at 4M ranks=2
S
rc=$?
[ $rc -eq 1 ] && grep -q 'no link write-bw-stream row at 4194304 bytes with N=2' "$tmp/out"; ok $? "a link row at a size the run lacks: fails with the reason"
spec <<'S'
check alltoall de: p50_us <= 1000 * link.write-lat at 8 ranks=2
check alltoall de: p50_us <= 1000 * link.write-lat at 8 ranks=2 impl=perftest
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 .*2 rows match the reference .*name it with KEY=VALUE' "$tmp/out" &&
	grep -q '^ok 2 .*the p50_us of link write-lat (perftest)' "$tmp/out"
ok $? "a reference two rows match (ibchar's and perftest's) fails; impl=perftest after it names one (exit $rc)"
spec <<'S'
check channel piggyback: p50_us <= 1
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 - line 1: channel piggyback: p50_us <= 1: no row of the runs checked matches' "$tmp/out"
ok $? "a check that matches no row fails, not skipped (exit $rc)"
spec <<'S'
check barrier rgm: p50_us <= 0.5
S
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'ok' "$tmp/out")" -eq 1 ] && grep -q 'rgm (ibchar)' "$tmp/out"
ok $? "model rows (impl=model) are not checked as measurements"

# the reference at the checked row's N: the N = 2 row comes first in the file
mkdir -p "$tmp/n"
cat >"$tmp/n/results.csv" <<CSV
$HDR
r,barrier,rpe,ibchar,shm,fork,1,2,2,0,,100,10,1,10,10,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,rds,ibchar,shm,fork,1,2,2,0,,100,10,1,1.0,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,rds,ibchar,shm,fork,1,4,4,0,,100,10,1,3.0,3,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,rpe,ibchar,shm,fork,1,4,4,0,,100,10,1,2.0,2,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,mpi,openmpi,verbs,mpirun,1,4,4,0,,100,10,1,9.0,9,3,4,0.1,1.9,2.1,0,spin,0,0.5,
CSV
spec "$tmp/n" <<'S'
check barrier rds: p50_us <= 1 * barrier.rpe at 0
check barrier rds ranks=4: p50_us <= 1 * barrier.rpe at 0 ranks=2
S
rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 - line 1: barrier rds (ibchar) shm N=2 .*bound 10 = 1 x 10, the p50_us of barrier rpe (ibchar) shm N=2 bytes=0$' "$tmp/out" &&
	grep -q '^not ok 2 - line 1: barrier rds (ibchar) shm N=4 .*p50_us = 3, bound 2 = 1 x 2, the p50_us of barrier rpe (ibchar) shm N=4 bytes=0$' "$tmp/out" &&
	grep -q '^ok 3 - line 2: barrier rds (ibchar) shm N=4 .*bound 10 = 1 x 10, the p50_us of barrier rpe (ibchar) shm N=2' "$tmp/out"
ok $? "SUITE.VARIANT at SIZE: N = 4 is checked against the N = 4 row, not the N = 2 one before it; ranks=2 after it names N = 2 (exit $rc)"
[ $rc -eq 1 ] || show
spec "$tmp/n" <<'S'
check barrier rds ranks=4: p50_us <= 10 * variant=mpi
check barrier rds ranks=4: p50_us <= 10 * variant=mpi xport=verbs
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 .*no row with variant=mpi beside it' "$tmp/out" && grep -q '^ok 2 .*the p50_us of barrier mpi (openmpi) verbs N=4' "$tmp/out"
ok $? "variant=mpi on another transport is not beside it; xport=verbs after it names it (exit $rc)"

# damaged input: exit 2 and one line naming the cell
mkdir -p "$tmp/bad"
cat >"$tmp/bad/results.csv" <<CSV
$HDR
r,barrier,rds,ibchar,shm,fork,1,2,2,0,,100,10,1,abc,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,rpe,ibchar,shm,fork,1,2,2,0,,100,10,1,-inf,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,pe,ibchar,shm,fork,1,2,2,0,,100,10,1,-1,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,ds,ibchar,shm,fork,1,2,2,0,,100,10,1,1,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r,barrier,rgm,ibchar,shm,fork,1,2,2,0,1,100,10,1,,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
CSV
for c in "rds abc" "rpe -inf" "pe -1"; do
	set -- $c
	echo "check barrier $1: p50_us <= 1000" | spec "$tmp/bad"; rc=$?
	[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q "results.csv, row [0-9]* (barrier $1 (ibchar) shm N=2 bytes=0): p50_us is '$2', not a time" "$tmp/err"
	ok $? "p50_us = '$2' is damaged input: exit 2, one line naming it, no verdict (exit $rc)"
done
echo "check barrier ds: p50_us <= 10 * variant=rds" | spec "$tmp/bad"; rc=$?
[ $rc -eq 2 ] && grep -q "(barrier rds .*): p50_us is 'abc'" "$tmp/err"; ok $? "a damaged reference row is damaged input too (exit $rc)"
echo "check barrier rgm: p50_us <= 1000" | spec "$tmp/bad"; rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 .*has no p50_us' "$tmp/out"; ok $? "an empty p50_us is a row without the figure: not ok, exit 1 (exit $rc)"

# a directory of two runs: each row against the reference of its own run
mkdir -p "$tmp/two"
cat >"$tmp/two/results.csv" <<CSV
$HDR
r1,barrier,rds,ibchar,shm,fork,1,2,2,0,,100,10,1,1,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r1,barrier,rpe,ibchar,shm,fork,1,2,2,0,,100,10,1,5,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r2,barrier,rds,ibchar,shm,fork,1,2,2,0,,100,10,1,4,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r2,barrier,rpe,ibchar,shm,fork,1,2,2,0,,100,10,1,3,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r3,barrier,rds,ibchar,shm,fork,1,2,2,0,,100,10,1,2,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,
r3,link,write-bw-stream,ibchar,shm,fork,1,2,2,1048576,,100,10,1,100,100,1,1,0.1,99,101,0,spin,0,0.1,
CSV
echo "check barrier rds: p50_us <= 1 * variant=rpe" | spec "$tmp/two"; rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 .*(run r1): .*the p50_us of barrier rpe (ibchar) shm N=2 bytes=0 (run r1)$' "$tmp/out" &&
	grep -q '^not ok 2 .*(run r2): .*p50_us = 4, bound 3 = 1 x 3, .* (run r2)$' "$tmp/out" &&
	grep -q '^not ok 3 .*(run r3): .*no row with variant=rpe beside it in its run' "$tmp/out" && grep -q 'holds 3 runs; every one is checked' "$tmp/err"
ok $? "a directory of three runs: all checked, each against its own run's row beside it, never another run's (exit $rc)"
echo "check barrier rds: p50_us <= 1 * link.write-bw-stream at 1M" | spec "$tmp/two"; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^ok .*the p50_us of link write-bw-stream (ibchar) shm N=2 bytes=1048576 (run r3)$' "$tmp/out")" -eq 3 ]
ok $? "SUITE.VARIANT at SIZE found in another run when the row's own has none: the link row of r3 (exit $rc)"
echo "check barrier rds: p50_us <= 1 * variant=rpe" | spec "$tmp/two" --run-id r1; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^ok' "$tmp/out")" -eq 1 ]; ok $? "--run-id r1: that run only (exit $rc)"
echo "check barrier rds: p50_us <= 1 * variant=rpe" | spec "$tmp/two" --run-id r1,r9; rc=$?
[ $rc -eq 2 ] && grep -q 'holds no run r9 (its runs: r1 r2 r3)' "$tmp/err"; ok $? "--run-id naming no run of DIR: exit 2 with DIR's runs (exit $rc)"

for s in "check barrier rds ranks=4 p50_us <= 1" "check barrier: p50_us <= 1" "check barrier rds: p99 <= 1" \
	 "check barrier rds: p50_us =< 1" "check barrier rds: p50_us <= 2 * nosuch" "bogus line" \
	 "check barrier rds: p50_us <= 2 * variant=mpi nosuch=1" "run barrier --out elsewhere"; do
	echo "$s" >"$tmp/s.spec"
	"$IBCHAR" accept --spec "$tmp/s.spec" "$tmp/d" >"$tmp/out" 2>&1; rc=$?
	[ $rc -eq 2 ] && grep -q 's.spec:1:' "$tmp/out"; ok $? "bad spec '$s': exit 2 with its line"
done

# usage and directories: exit 2, one line
echo "check barrier rds: p50_us <= 1000" >"$tmp/s.spec"
"$IBCHAR" accept --spec "$tmp/s.spec" --out "$tmp/x" "$tmp/d" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'with DIR nothing runs' "$tmp/err" && [ ! -e "$tmp/x" ]; ok $? "--out with DIR: exit 2 (exit $rc)"
"$IBCHAR" accept --spec "$tmp/s.spec" --run-id r1 --out "$tmp/x" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- '--run-id picks runs of a results directory' "$tmp/err" && [ ! -e "$tmp/x" ]; ok $? "--run-id without DIR: exit 2 (exit $rc)"
"$IBCHAR" accept --spec "$tmp/s.spec" "$tmp/nosuch" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "cannot read $tmp/nosuch/results.csv: No such file or directory" "$tmp/err"
ok $? "a directory that does not exist: exit 2, one line (exit $rc)"
mkdir -p "$tmp/rag"; printf '%s\nr,barrier,rds\n' "$HDR" >"$tmp/rag/results.csv"
"$IBCHAR" accept --spec "$tmp/s.spec" "$tmp/rag" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "rag/results.csv is not a readable CSV file" "$tmp/err" && [ ! -s "$tmp/out" ]; ok $? "a ragged results.csv: exit 2 (exit $rc)"

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

# a stand-in bench: a copy of ibchar finds ibchar-barrier beside it
mkdir -p "$tmp/bin"
cp "$IBCHAR" "$tmp/bin/ibchar"
cat >"$tmp/bin/ibchar-barrier" <<EOF
#!/bin/sh
# FAKE=ok (a row with p50_us FAKE_P50, run_id FAKE_RUN_ID or the runner's), fail, kill
[ "\$1" = --list ] && { echo rds; echo rpe; exit 0; }
touch "$tmp/ran"
while [ \$# -gt 0 ]; do
	case \$1 in --out) out=\$2; shift ;; --run-id) id=\$2; shift ;; --ranks) n=\$2; shift ;; esac
	shift
done
[ -n "\$FAKE_RUN_ID" ] && id=\$FAKE_RUN_ID
[ -s "\$out/results.csv" ] || echo "$HDR" >"\$out/results.csv"
case \$FAKE in
fail) echo "ibchar-barrier: error: xport: cannot map the peer's segment (stand-in)" >&2; exit 1 ;;
kill) kill -9 \$\$ ;;
esac
echo "\$id,barrier,rds,ibchar,shm,fork,1,\$n,\$n,0,,100,10,1,\$FAKE_P50,1,3,4,0.1,1.9,2.1,0,spin,0,0.5," >>"\$out/results.csv"
EOF
chmod +x "$tmp/bin/ibchar-barrier"
FAKE_ACC="$tmp/bin/ibchar"
# stale: rows already in DIR, with the very run_id the new run's rows get
stale() {
	rm -rf "$tmp/st" "$tmp/ran"
	mkdir -p "$tmp/st"
	printf '%s\nsame,barrier,rds,ibchar,shm,fork,1,2,2,0,,100,10,1,%s,1,3,4,0.1,1.9,2.1,0,spin,0,0.5,\n' "$HDR" "$1" >"$tmp/st/results.csv"
}
cat >"$tmp/run.spec" <<'S'
run barrier --ranks 2
check barrier rds: p50_us <= 10
S
stale 500
FAKE=ok FAKE_P50=1 FAKE_RUN_ID=same "$FAKE_ACC" accept --spec "$tmp/run.spec" --out "$tmp/st" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'ok' "$tmp/out")" -eq 2 ] && grep -q '^ok 1 - line 1: run barrier --ranks 2: 1 rows$' "$tmp/out" &&
	grep -q '^ok 2 - line 2: barrier rds (ibchar) shm N=2 bytes=0: p50_us <= 10: p50_us = 1, bound 10$' "$tmp/out"
ok $? "a stale failing row in DIR with the new run's run_id is not checked: only the run line's row (exit $rc)"
[ $rc -eq 0 ] || show
stale 1
FAKE=fail "$FAKE_ACC" accept --spec "$tmp/run.spec" --out "$tmp/st" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "^not ok 1 - line 1: run barrier --ranks 2: exit 1: ibchar-barrier: error: xport: cannot map the peer's segment (stand-in) (0 rows written)$" "$tmp/out" &&
	grep -q '^not ok 2 - line 2: barrier rds: p50_us <= 10: no row of the runs checked matches' "$tmp/out" && ! grep -q '^ok' "$tmp/out"
ok $? "a failed run line: not ok with exit status and error line; a stale passing row in DIR does not pass the check (exit $rc)"
[ $rc -eq 1 ] || show
stale 1
FAKE=kill "$FAKE_ACC" accept --spec "$tmp/run.spec" --out "$tmp/st" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 - line 1: run barrier --ranks 2: exit 1: .*ibchar-barrier was killed by signal 9' "$tmp/out"
ok $? "a run line whose bench was killed: not ok, the signal named (exit $rc)"
[ $rc -eq 1 ] || show

# run lines checked before anything runs: with --dry-run, and before a real run
cat >"$tmp/bad.spec" <<'S'
run barrier --ranks 2
run barrier --ranks 2 --variants rds,nosuch
run barrier --iters abc
run nosuch
check barrier rds: p50_us <= 10
S
rm -rf "$tmp/dr" "$tmp/ran"
FAKE=ok FAKE_P50=1 "$FAKE_ACC" accept --spec "$tmp/bad.spec" --dry-run --out "$tmp/dr" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "bad.spec:2: ibchar run refuses the line: ibchar: unknown variant 'nosuch'" "$tmp/err" &&
	grep -q "bad.spec:3: ibchar run refuses the line: .*--iters: 'abc' is not an integer" "$tmp/err" &&
	grep -q "bad.spec:4: ibchar run refuses the line: ibchar: unknown suite 'nosuch'" "$tmp/err" &&
	! grep -q 'bad.spec:1:' "$tmp/err" && [ ! -e "$tmp/ran" ] && [ ! -e "$tmp/dr" ]
ok $? "--dry-run: an unknown variant, a bad option value and an unknown suite, each by its line; exit 2, nothing run (exit $rc)"
[ $rc -eq 2 ] || show
FAKE=ok FAKE_P50=1 "$FAKE_ACC" accept --spec "$tmp/bad.spec" --out "$tmp/dr" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "bad.spec:2: ibchar run refuses" "$tmp/err" && [ ! -e "$tmp/ran" ] && [ ! -e "$tmp/dr" ] && [ ! -s "$tmp/out" ]
ok $? "the same spec without --dry-run: exit 2 before line 1 runs (exit $rc)"
head -1 "$tmp/bad.spec" >"$tmp/good.spec"; tail -1 "$tmp/bad.spec" >>"$tmp/good.spec"
rm -rf "$tmp/dr" "$tmp/ran"
FAKE=ok FAKE_P50=1 "$FAKE_ACC" accept --spec "$tmp/good.spec" --dry-run --out "$tmp/dr" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && grep -q '^run 1: barrier --ranks 2$' "$tmp/out" && grep -q '^check 2: barrier rds: p50_us <= 10$' "$tmp/out" &&
	[ ! -e "$tmp/ran" ] && [ ! -e "$tmp/dr" ]
ok $? "--dry-run of a good spec: exit 0, its lines listed, nothing run (exit $rc)"

# b2b_p50_us: the back-to-back median from the row's extra
mkdir -p "$tmp/b2b"
cat >"$tmp/b2b/results.csv" <<CSV
$HDR
r,channel,piggyback,ibchar,shm,fork,1,2,2,8,,100,10,0.1,0.12,0.1,0.2,0.3,0.01,0.11,0.13,0,spin,0,0.04,rank_mean_us=0.1;b2b_p50_us=0.0600;sync=window
r,channel,probe-write,ibchar,shm,fork,1,2,2,8,,100,10,0.1,0.07,0.1,0.2,0.3,0.01,0.06,0.08,0,spin,0,0.04,paper_us=0.05;b2b_p50_us=0.0400
r,channel,piggyback-bw,ibchar,shm,fork,1,2,2,8,,100,10,0.1,0.04,0.1,0.2,0.3,0.01,0.03,0.05,0,spin,0,0.04,window=64
r,channel,basic,ibchar,shm,fork,1,2,2,8,,100,10,0.1,0.2,0.1,0.2,0.3,0.01,0.19,0.21,0,spin,0,0.04,b2b_p50_us=x
CSV
spec "$tmp/b2b" <<'S'
check channel piggyback bytes=8: b2b_p50_us <= 1.5 * variant=probe-write
check channel piggyback bytes=8: b2b_p50_us <= 1.4 * variant=probe-write
S
rc=$?
[ $rc -eq 1 ] && grep -q '^ok 1 - .*b2b_p50_us = 0.06, bound 0.06 = 1.5 x 0.04, the b2b_p50_us of channel probe-write' "$tmp/out" &&
	grep -q '^not ok 2 - .*b2b_p50_us = 0.06, bound 0.056' "$tmp/out"
ok $? "b2b_p50_us from the rows' extra: 0.06 <= 1.5 x probe-write's 0.04 holds, <= 1.4 x fails (exit $rc)"
[ $rc -eq 1 ] || show
spec "$tmp/b2b" <<'S'
check channel piggyback-bw bytes=8: b2b_p50_us <= 1
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 - .*has no b2b_p50_us (no back-to-back loop)' "$tmp/out"
ok $? "... a row without a back-to-back loop fails its check, saying so (exit $rc)"
spec "$tmp/b2b" <<'S'
check channel basic bytes=8: b2b_p50_us <= 1
S
rc=$?
[ $rc -eq 2 ] && grep -q "b2b_p50_us is 'x', not a time" "$tmp/err"
ok $? "... a b2b_p50_us that is not a number is damaged input: exit 2 (exit $rc)"

for f in softroce example-cluster channel-floor channel-floor-rxe; do
	if { [ $f = example-cluster ] && [ ! -x "$BUILD/bin/ibchar-barrier-openmpi" ]; } ||
	   { [ $f = channel-floor ] && [ ! -x "$BUILD/bin/ibchar-channel-openmpi" ]; }; then
		ok 0 "# SKIP accept/$f.spec runs --mpi openmpi: no Open MPI build here"
		continue
	fi
	"$IBCHAR" accept --spec "$SRC/accept/$f.spec" --dry-run --out "$tmp/never" >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^check ' "$tmp/out")" -ge 4 ] && [ "$(grep -c '^run ' "$tmp/out")" -ge 1 ] && [ ! -e "$tmp/never" ]
	ok $? "accept/$f.spec: its run lines hold and its checks parse (--dry-run, exit $rc)"
	[ $rc -eq 0 ] || show
done

# end to end on shm: the run lines, then the checks
cat >"$tmp/e2e.spec" <<'S'
run probe
run barrier --ranks 2 --iters 300 --variants rpe,rds
check barrier rds ranks=2: p50_us <= 1000
check barrier rds ranks=2: p50_us <= 20 * variant=rpe
check probe probe-cross: p50_us <= 1000
S
timeout 300 "$IBCHAR" accept --spec "$tmp/e2e.spec" --out "$tmp/e2e" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^ok' "$tmp/out")" -eq 5 ] && [ -s "$tmp/e2e/results.csv" ] &&
	grep -q '^ok 4 .*the p50_us of barrier rpe (ibchar) shm N=2 bytes=0 (run [0-9TZ]* of line 2)$' "$tmp/out"
ok $? "end to end: the spec's 2 runs, then 3 checks hold, the reference from line 2's run (exit $rc)"
[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/out"; tail -5 "$tmp/err" | sed 's/^/# /'; }

# beside Open MPI: its barrier is variant mpi, impl openmpi (the example spec's references)
if [ -x "$BUILD/bin/ibchar-barrier-openmpi" ] && command -v mpirun.openmpi >/dev/null; then
	cat >"$tmp/om.spec" <<'S'
run barrier --ranks 2 --iters 100 --xport shm --mpi openmpi --variants rds,mpi
check barrier rds: p50_us <= 1000 * variant=mpi
check barrier mpi impl=openmpi: p50_us <= 1000
S
	timeout 300 "$IBCHAR" accept --spec "$tmp/om.spec" --out "$tmp/om" >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^ok' "$tmp/out")" -eq 3 ] && grep -q '^ok 2 .*the p50_us of barrier mpi (openmpi) shm N=2 bytes=0$' "$tmp/out"
	ok $? "end to end with --mpi openmpi: variant=mpi is Open MPI's MPI_Barrier, impl=openmpi selects it (exit $rc)"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/out"; tail -5 "$tmp/err" | sed 's/^/# /'; }
else
	ok 0 "# SKIP no Open MPI build or mpirun.openmpi here"
fi

# a row that failed its own correctness check (valid=0) is not a measurement
mkdir -p "$tmp/inv"
cat >"$tmp/inv/results.csv" <<CSV
$HDR
r,barrier,rds,ibchar,shm,fork,1,4,4,0,,100,10,1,2.0,2,3,4,0.1,1.9,2.1,0,spin,0,0.5,valid=0;checked=order
r,barrier,rpe,ibchar,shm,fork,1,4,4,0,,100,10,1,2.5,2,3,4,0.1,2.4,2.6,0,spin,0,0.5,valid=1;checked=order
r,barrier,pe,ibchar,shm,fork,1,4,4,0,,100,10,1,2.5,2,3,4,0.1,2.4,2.6,0,spin,0,0.5,valid=1;checked=order
CSV
printf 'key,value\nrun_id,r\n' >"$tmp/inv/meta.csv"
spec "$tmp/inv" <<'S'
check barrier rds: p50_us <= 2.5
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 - .*p50_us = 2, but the row failed its correctness check (valid=0)' "$tmp/out"
ok $? "a row with valid=0 under its bound: not ok, it failed its correctness check (exit $rc)"
spec "$tmp/inv" <<'S'
check barrier pe: p50_us <= 1.5 * variant=rds
check barrier pe: p50_us <= 1.5 * variant=rpe
S
rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 1 - .*the reference barrier rds .*failed its correctness check (valid=0)' "$tmp/out" &&
	grep -q '^ok 2 - ' "$tmp/out"
ok $? "... and as a reference it fails the check that uses it; a valid reference holds (exit $rc)"
