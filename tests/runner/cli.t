#!/bin/sh
# The ibchar command: help, bad options, list, and a real probe run whose
# results.csv and meta.csv are checked; sweep options a bench would refuse
# are refused before a results directory is made, in one line.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$BUILD/bin/ibchar"
tap_tmp cli
echo "1..31"

"$IBCHAR" --help >"$tmp/help" 2>&1; rc=$?
ok $rc "ibchar --help exits 0"
grep -q '^Usage: ibchar' "$tmp/help" && grep -q 'run \[SUITE' "$tmp/help"; ok $? "--help shows usage and commands"

"$IBCHAR" --no-such-option >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ]; ok $? "a bad option exits 2 (got $rc)"
grep -q "unknown option '--no-such-option'" "$tmp/err"; ok $? "... with a message naming it"

"$IBCHAR" frobnicate >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown command 'frobnicate'" "$tmp/err"; ok $? "an unknown command exits 2 with a message"

"$IBCHAR" run --iters=abc probe >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ -s "$tmp/err" ]; ok $? "a bad value of a run option exits 2 with a message (got $rc)"

# --dry-run: the checks a run makes before it starts, and nothing made or run
"$IBCHAR" run barrier --ranks 2,4 --variants rds --dry-run --out "$tmp/dry" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ ! -e "$tmp/dry" ] && grep -q 'dry run: .*barrier' "$tmp/err" && [ ! -s "$tmp/out" ]
ok $? "run --dry-run: exit 0, says what would run, no directory made (exit $rc)"
"$IBCHAR" run barrier --variants rds,nosuch --dry-run --out "$tmp/dry" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/dry" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "unknown variant 'nosuch'" "$tmp/err"
ok $? "run --dry-run with an unknown variant: exit 2, one line, no directory (exit $rc)"
"$IBCHAR" run barrier --variants nosuch --out "$tmp/real" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/real" ]
ok $? "run with an unknown variant: exit 2 before a results directory is made (exit $rc)"

"$IBCHAR" run --help >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q -- '--ranks' "$tmp/out"; ok $? "ibchar run --help lists its options"

"$IBCHAR" list >"$tmp/list" 2>"$tmp/err"; rc=$?
ok $rc "ibchar list exits 0"
grep -q '^  probe ' "$tmp/list" && grep -q 'probe-cross' "$tmp/list" && grep -q 'probe-same' "$tmp/list" &&
	grep -q 'probe-write' "$tmp/list"
ok $? "ibchar list lists the probe suite and its variants"
grep -q '^  shm ' "$tmp/list" && grep -q '^MPIs:' "$tmp/list"; ok $? "ibchar list shows transports and MPIs"

"$IBCHAR" run probe --out "$tmp/r" --iters 300 >"$tmp/sum" 2>"$tmp/err"; rc=$?
ok $rc "ibchar run probe --out DIR exits 0"
if [ $rc -ne 0 ]; then sed 's/^/# /' "$tmp/err"; fi
grep -q 'probe-cross' "$tmp/sum" && grep -q 'p50_us' "$tmp/sum"; ok $? "a summary table on stdout"
grep -q '^probe: point' "$tmp/err"; ok $? "a progress line per point on stderr"

# results.csv: docs/design.md header, probe rows with numbers
hdr=$(head -n 1 "$tmp/r/results.csv" 2>/dev/null)
[ "$hdr" = "run_id,suite,variant,impl,xport,launcher,nodes,ppn,ranks,bytes,fanin,iters,warmup,min_us,p50_us,mean_us,p99_us,max_us,stdev_us,ci_lo_us,ci_hi_us,skew_us,wait,oversub,probe_us,extra" ]
ok $? "results.csv has the docs/design.md columns"
rows=$(awk -F, 'NR > 1 && $2 == "probe" && ($3 == "probe-cross" || $3 == "probe-same") && $12 == 300 && $15 + 0 > 0 { c++ } END { print c + 0 }' "$tmp/r/results.csv")
[ "$rows" -ge 1 ]; ok $? "results.csv holds probe rows with a positive median ($rows rows)"
if [ "$(nproc)" -ge 2 ]; then
	rows=$(awk -F, 'NR > 1 && $3 == "probe-write" && $12 == 300 && $15 + 0 > 0 { c++ } END { print c + 0 }' "$tmp/r/results.csv")
	[ "$rows" -eq 1 ]; ok $? "probe-write, the write ping-pong's memory pattern, has its row ($rows)"
else
	ok 0 "# SKIP probe-write needs two PUs"
fi
for k in run_id git_rev host kernel cpu_model cores pus pinning oversubscribed wait xport device rdma_core_version mpi_version timer date_utc command; do
	grep -q "^$k," "$tmp/r/meta.csv" 2>/dev/null || { echo "# meta.csv lacks $k"; missing=1; }
done
[ -z "$missing" ]; ok $? "meta.csv holds the provenance keys"
# in a guest scripts/softroce-vm names the host's CPU (IBC_VM_HOST_CPU): meta.csv keeps it
IBC_VM_HOST_CPU='Test Host CPU, tcg' "$IBCHAR" run probe --out "$tmp/vm" --iters 50 >/dev/null 2>&1 &&
	grep -q '^vm_host_cpu,"Test Host CPU, tcg"$' "$tmp/vm/meta.csv" &&
	env -u IBC_VM_HOST_CPU "$IBCHAR" run probe --out "$tmp/novm" --iters 50 >/dev/null 2>&1 &&
	! grep -q '^vm_host_cpu,' "$tmp/novm/meta.csv"
ok $? "meta.csv's vm_host_cpu is IBC_VM_HOST_CPU's, and absent without it"

# no suite named: every suite that can run here, rows appended under one run id
"$IBCHAR" run --out "$tmp/all" --ranks 2 --iters 100 >"$tmp/sum2" 2>"$tmp/err2"; rc=$?
ok $rc "ibchar run --out DIR (every suite that can run here) exits 0"
if [ $rc -ne 0 ]; then sed 's/^/# /' "$tmp/err2"; fi
ids=$(awk -F, 'NR > 1 { print $1 }' "$tmp/all/results.csv" 2>/dev/null | sort -u | wc -l)
grep -q '^[^,]*,probe,probe-' "$tmp/all/results.csv" 2>/dev/null && [ "$ids" -eq 1 ]
ok $? "... with probe rows, all under one run id"

# refused: exit 2, one line on stderr, no directory
# refused TEXT REGEX ARGS...: ibchar run ARGS --out $tmp/never fails so
refused() {
	text=$1 re=$2
	shift 2
	"$IBCHAR" run "$@" --out "$tmp/never" >/dev/null 2>"$tmp/err"; rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "$re" "$tmp/err" && [ ! -e "$tmp/never" ]
	ok $? "$text: exit 2, one line, no directory made (exit $rc: $(head -c 160 "$tmp/err"))"
}
refused "--mpi nosuch" "unknown MPI 'nosuch'" barrier --mpi nosuch
refused "an unknown variant" "unknown variant 'nosuch'" barrier --variants rds,nosuch
refused "an unknown transport" "unknown transport 'ib'" barrier --xport ib
refused "an unknown launcher" "unknown launcher 'ssh'" barrier --launcher ssh
refused "a bad size list" "bad size list '8,4Q'" alltoall --sizes 8,4Q
refused "a negative fan-in" "bad fan-in list '0'" barrier --fanin 0
refused "a bad rank list" "bad rank list '2,x'" barrier --ranks 2,x
refused "an unknown suite" "unknown suite 'nosuch'" nosuch
