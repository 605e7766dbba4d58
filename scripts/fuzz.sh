#!/usr/bin/env bash
# fuzz.sh - run ibchar's libFuzzer harnesses (tests/fuzz/<name>.c).
#
# Usage: scripts/fuzz.sh run|check FUZZDIR [NAME...]
#   run    fuzz each harness for FUZZ_SECONDS (default 60) from its committed
#          corpus tests/fuzz/corpus/<name>/; new inputs go to FUZZDIR/corpus/<name>/,
#          a crashing input to FUZZDIR/crashes/<name>-crash-*; prints per harness
#          the executions and whether it crashed, and writes them to
#          FUZZDIR/summary.txt; exit status 1 when one crashed
#   check  run each harness once over every file of its committed corpus
#          (a regression test: exit status 1 when one fails)
# FUZZDIR holds the harness binaries (make fuzz-build puts them in build/fuzz).
# NAME...: only these harnesses.
set -euo pipefail
cd "$(dirname "$0")/.."
me=fuzz
usage() { sed -n '2,14s/^# \{0,1\}//p' "$0"; }
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && { usage; exit 0; }
[ $# -ge 2 ] || { usage >&2; exit 2; }
mode=$1 dir=$2
shift 2
case $mode in run | check) ;; *) echo "$me: unknown mode '$mode' (run or check)" >&2; exit 2 ;; esac
secs=${FUZZ_SECONDS:-60}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
names=("$@")
if [ ${#names[@]} = 0 ]; then
	for f in tests/fuzz/*.c; do names+=("$(basename "$f" .c)"); done
fi
fail=0
[ "$mode" = run ] && : > "$dir/summary.txt"
for n in "${names[@]}"; do
	bin=$dir/$n seeds=tests/fuzz/corpus/$n
	[ -x "$bin" ] || { echo "$me: $bin not built (make fuzz-build)" >&2; exit 2; }
	[ -d "$seeds" ] || { echo "$me: no corpus $seeds" >&2; exit 2; }
	if [ "$mode" = check ]; then
		# a libFuzzer binary given files runs each once
		if ! find "$seeds" -type f -print0 | xargs -0 "$bin" >"$dir/$n.check.log" 2>&1; then
			echo "$me: $n fails on its corpus: see $dir/$n.check.log" >&2
			fail=1
		fi
		continue
	fi
	mkdir -p "$dir/corpus/$n" "$dir/crashes"
	st=0
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/crashes/$n-" "$dir/corpus/$n" "$seeds" >"$dir/$n.log" 2>&1 || st=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$n.log" | tail -1)
	[ -n "$runs" ] || runs=$(sed -n 's/.*Done \([0-9]*\) runs.*/\1/p' "$dir/$n.log" | tail -1)
	if [ "$st" = 0 ]; then verdict="no crash"; else verdict="CRASH (status $st, input in $dir/crashes/)"; fail=1; fi
	printf '%-14s %12s executions in %s s: %s\n' "$n" "${runs:-?}" "$secs" "$verdict" | tee -a "$dir/summary.txt"
done
exit $fail
