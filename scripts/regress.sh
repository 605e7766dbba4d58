#!/usr/bin/env bash
# regress.sh - `make regress`: the Soft-RoCE regression suites in one guest,
# compared with the committed baseline (results/baselines/softroce/).
#
# Usage: scripts/regress.sh [--update] [--out DIR] [--base DIR] [--help]
#   (no option)  run the suites below in a Soft-RoCE guest (scripts/softroce-vm)
#                into DIR (default results/regress-<UTC timestamp>), then
#                `ibchar compare BASE DIR` (TAP on stdout, also DIR/compare.tap,
#                JUnit in DIR/compare.xml) and `ibchar report DIR`
#                (DIR/report.html, with the verdicts); exit status: compare's
#                (0 nothing slower or missing, 1 a regression)
#   --update     run the suites and make the run the new baseline (BASE's
#                results.csv, samples.csv, meta.csv are replaced); no compare
#   --out DIR    where the run goes (also $IBC_REGRESS_OUT; a run already
#                there is replaced)
#   --base DIR   the baseline (default results/baselines/softroce)
#
# The suites (short, so the whole run is a few minutes under TCG):
#   link     verbs, 8 B, 4 KiB, 64 KiB: write-lat, write-lat-lastbyte,
#            write-lat-imm, read-lat, send-lat, write-bw-stream
#   barrier  verbs, N = 2, 4: rpe, rds, rgm (fan-in 3)
#   alltoall verbs, N = 2, 4, 32 B and 4 KiB: hrwg, de, pairwise
#   probe    the placement probe (compare reads slower runs relative to it)
# after a short link run that is discarded (a warm-up).
# IBC_REGRESS_TIMEOUT (seconds, default 1500) bounds the guest;
# IBC_REGRESS_ARGS is added to each `ibchar run`.  The baseline is only
# meaningful on the machine (and guest set-up) that made it: a new machine
# starts with --update.
set -euo pipefail
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
cd "$ROOT"
me=regress
BUILD=${IBC_BUILD:-$ROOT/build}
IBCHAR=$BUILD/bin/ibchar
base=results/baselines/softroce
out="" update=0
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
while (($#)); do
	case $1 in
	--update) update=1 ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	--base) base=${2:?--base needs a directory}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$me: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$IBCHAR" ] || { echo "$me: $IBCHAR not built (make all)" >&2; exit 2; }
if ((!update)) && [ ! -s "$base/samples.csv" ]; then
	echo "$me: no baseline in $base (make one: scripts/regress.sh --update)" >&2
	exit 2
fi
[ -n "$out" ] || out=${IBC_REGRESS_OUT:-results/regress-$(date -u +%Y%m%dT%H%M%SZ)}
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
	# only a results directory is replaced
	[ -e "$out/results.csv" ] || { echo "$me: $out is not empty and holds no results.csv" >&2; exit 2; }
	rm -rf "$out"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
# the guest sees this machine's files read-only (but its own /tmp, /run and
# /dev/shm) and one directory read-write: the checkout, or DIR when it is
# outside the checkout
rw=()
case "$out/" in
"$ROOT"/*) ;;
*)
	case "$ROOT/" in
	/tmp/* | /run/* | /dev/shm/*)
		echo "$me: --out $out: with the checkout under ${ROOT%"${ROOT#/*/}"} the run must go inside it" \
			"(the guest has its own ${ROOT%"${ROOT#/*/}"})" >&2
		exit 2 ;;
	esac
	rw=(--rw "$out") ;;
esac
echo "$me: the suites in a Soft-RoCE guest -> $out" >&2
a=${IBC_REGRESS_ARGS:-}
b=$(printf '%q' "$IBCHAR")
# a short link run first, discarded: the guest's first verbs run after boot
# pays for TCG's code translation and the device's first connections
script="set -e; cd $(printf '%q' "$ROOT")
$b run link --xport verbs --sizes 8 --iters 200 --variants write-lat,send-lat --out /tmp/warm-up $a >/dev/null
$b run link --xport verbs --sizes 8,4096,65536 --iters 500 --out $(printf '%q' "$out") \
	--variants write-lat,write-lat-lastbyte,write-lat-imm,read-lat,send-lat,write-bw-stream $a >/dev/null
$b run barrier --xport verbs --ranks 2,4 --iters 300 --variants rpe,rds,rgm --fanin 3 --out $(printf '%q' "$out") $a >/dev/null
$b run alltoall --xport verbs --ranks 2,4 --sizes 32,4096 --iters 100 --variants hrwg,de,pairwise --out $(printf '%q' "$out") $a >/dev/null
$b run probe --out $(printf '%q' "$out") $a >/dev/null"
t0=$(date +%s)
"$ROOT/scripts/softroce-vm" "${rw[@]}" --timeout "${IBC_REGRESS_TIMEOUT:-1500}" "$script" || {
	echo "$me: the suites failed in the guest (exit $?); see above" >&2
	exit 1
}
echo "$me: the suites took $(( $(date +%s) - t0 )) s" >&2
if ((update)); then
	mkdir -p "$base"
	cp "$out/results.csv" "$out/samples.csv" "$out/meta.csv" "$base/"
	echo "$me: $base is the new baseline (from $out); commit it" >&2
	exit 0
fi
status=0
"$IBCHAR" compare --junit "$out/compare.xml" "$base" "$out" | tee "$out/compare.tap" || status=$?
"$IBCHAR" report "$out" >/dev/null || echo "$me: the report failed" >&2
echo "$me: the report is $out/report.html; compare exit status $status" >&2
exit $status
