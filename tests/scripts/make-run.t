#!/bin/sh
# `make run` (scripts/make-run.sh), shortened: the barrier, alltoall and
# probe suites into one directory, the figures, and it ends with the report
# of its own results (report.html naming every suite, figures inlined).
. "$(dirname "$0")/../lib/tap.sh"
tap_need "$BUILD/bin/ibchar" "$BUILD/bin/ibchar-barrier" "$BUILD/bin/ibchar-alltoall"
tap_tmp make-run
echo "1..3"
root=$(cd "$(dirname "$0")/../.." && pwd)
IBC_BUILD=$(cd "$BUILD" && pwd) IBC_RUN_OUT=$tmp/run IBC_RUN_RANKS=2,3 IBC_RUN_ITERS=100 \
	IBC_RUN_A2A_RANKS=2 IBC_RUN_A2A_ITERS=50 IBC_RUN_BUDGET=2 \
	timeout 300 "$root/scripts/make-run.sh" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "scripts/make-run.sh with a short sweep exits 0"
[ $rc -eq 0 ] || tail -5 "$tmp/err" | sed 's/^/# /'
s=$(awk -F, 'NR > 1 { print $2 }' "$tmp/run/results.csv" 2>/dev/null | sort -u | tr '\n' ' ')
[ "$s" = "alltoall barrier probe " ]; ok $? "rows of barrier, alltoall and probe ($s)"
r=$tmp/run/report.html
[ -s "$r" ] && grep -q 'id="suite-barrier"' "$r" && grep -q 'id="suite-alltoall"' "$r" &&
	grep -q 'id="suite-probe"' "$r" && grep -q 'data:image/png;base64,' "$r" &&
	grep -q "see $tmp/run/report.html" "$tmp/err"
ok $? "it ends with its report: $tmp/run/report.html, every suite, figures inlined"
