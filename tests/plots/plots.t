#!/bin/sh
# `ibchar plot` and the barrier figure scripts on a synthetic results
# directory: the six barrier files appear and are non-empty, the factor the
# figure plots (its .data.csv) is the CSV's factor_vs_mpi_pe / _ds for every
# RPE/RDS/RGM row, the latency figure plots the CSV's p50, the factor figure
# copes without MPI rows, bad directories exit 2, a failing script fails the
# command.  Skips without python3 + matplotlib.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
PLOTS=$(cd "$(dirname "$0")/../../plots" && pwd)
tap_need "$IBCHAR"
PY=
for c in ${IBC_PYTHON:-} python3 /usr/bin/python3; do
	if "$c" -c 'import matplotlib' >/dev/null 2>&1; then PY=$c; break; fi
done
if [ -z "$PY" ]; then
	echo "1..0 # SKIP python3-matplotlib is not installed"
	exit 0
fi
export IBC_PYTHON=$PY
unset IBC_PLOTS

tap_tmp plots
echo "1..20"

HDR=run_id,suite,variant,impl,xport,launcher,nodes,ppn,ranks,bytes,fanin,iters,warmup,min_us,p50_us,mean_us,p99_us,max_us,stdev_us,ci_lo_us,ci_hi_us,skew_us,wait,oversub,probe_us,extra

# synthetic barrier rows: $1 = dir, $2 = 1 to include the MPI variants
synth() {
	mkdir -p "$1"
	{
	echo "$HDR"
	for N in 2 4 8; do
		if [ $N -gt 2 ]; then o=1; w=spin-yield; else o=0; w=spin; fi
		for v in rpe rds rgm:1 rgm:3 rgm:7 pe ds mpi mpi-pe mpi-ds; do
			case $v in mpi*) [ "$2" = 1 ] || continue; impl=openmpi ;; *) impl=ibchar ;; esac
			name=${v%%:*}; f=
			case $v in rgm:*) f=${v#rgm:}; [ "$f" -lt $N ] || continue ;; esac
			# latency grows with N and differs per variant
			p50=$(awk -v n=$N -v v="$v" 'BEGIN { k = length(v); printf "%.4f", n * (1 + k / 10) }')
			lo=$(awk -v p="$p50" 'BEGIN { printf "%.4f", p * 0.95 }')
			hi=$(awk -v p="$p50" 'BEGIN { printf "%.4f", p * 1.07 }')
			extra="rank_mean_us=$p50"
			# the factors of the run itself (the MPI variants' p50 here:
			# 2.4 N and 2.5 N), deliberately not what the plot would compute
			# from another pair of rows
			if [ "$2" = 1 ] && [ "$impl" = ibchar ]; then
				extra="$extra;$(awk -v n=$N -v p="$p50" 'BEGIN { printf "factor_vs_mpi_pe=%.6f;factor_vs_mpi_ds=%.6f", 2.4 * n / p, 2.5 * n / p }')"
			fi
			[ -n "$f" ] && extra="$extra;fanin=$f;naks=0"
			echo "SYNTH1,barrier,$name,$impl,shm,fork,1,$N,$N,0,$f,1000,100,$lo,$p50,$p50,$hi,$hi,0.1,$lo,$hi,0.05,$w,$o,0.08,$extra"
		done
	done
	} >"$1/results.csv"
	printf 'key,value\nrun_id,SYNTH1\nhost,testhost\nxport,shm\ndevice,shm\npus,2\n' >"$1/meta.csv"
}

synth "$tmp/a" 1
"$IBCHAR" plot "$tmp/a" >"$tmp/out" 2>"$tmp/err"; rc=$?
ok $rc "ibchar plot on a synthetic barrier run exits 0 (got $rc)"
for f in barrier_latency barrier_factor barrier_fanin; do
	[ -s "$tmp/a/$f.png" ] && [ -s "$tmp/a/$f.pdf" ]; ok $? "$f.png and $f.pdf written, non-empty"
done
[ "$(grep -c "$tmp/a/barrier_.*\.\(png\|pdf\)" "$tmp/out")" -eq 6 ]; ok $? "the six written paths are printed on stdout"
head -c 8 "$tmp/a/barrier_latency.png" | od -An -c | grep -q 'P   N   G'; ok $? "barrier_latency.png is a PNG"
head -c 5 "$tmp/a/barrier_factor.pdf" | grep -q '%PDF'; ok $? "barrier_factor.pdf is a PDF"

# the plotted factors are the CSV's: every (panel, series, N) point of
# barrier_factor.data.csv against the factor_vs_* of the matching row
"$PY" - "$tmp/a" >"$tmp/cmp" 2>&1 <<'EOF'
import csv, sys
d = sys.argv[1]
want = {}
for r in csv.DictReader(open(d + "/results.csv")):
    if r["variant"] not in ("rpe", "rds", "rgm"):
        continue
    ex = dict(kv.split("=", 1) for kv in r["extra"].split(";") if "=" in kv)
    label = r["variant"] + (" l=%s" % r["fanin"] if r["fanin"] else "")
    for panel, key in (("MPI-PE", "factor_vs_mpi_pe"), ("MPI-DS", "factor_vs_mpi_ds")):
        want[(panel, label, r["ranks"])] = float(ex[key])
got = {}
for r in csv.DictReader(open(d + "/barrier_factor.data.csv")):
    panel = "MPI-PE" if "MPI-PE" in r["panel"] else "MPI-DS" if "MPI-DS" in r["panel"] else r["panel"]
    got[(panel, r["series"], r["x"])] = float(r["y"])
bad = [(k, want[k], got.get(k)) for k in want
       if got.get(k) is None or abs(got[k] - want[k]) > 1e-9 * want[k]]
print("compared %d points, %d differ %s" % (len(want), len(bad), bad[:3]))
sys.exit(1 if bad or not want else 0)
EOF
ok $? "barrier_factor plots the CSV's factor_vs_mpi_pe/_ds at every point ($(cat "$tmp/cmp"))"
"$PY" - "$tmp/a" >"$tmp/cmp" 2>&1 <<'EOF'
import csv, sys
d = sys.argv[1]
rows = {}
for r in csv.DictReader(open(d + "/results.csv")):
    label = r["variant"] + (" l=%s" % r["fanin"] if r["fanin"] else "")
    label += "" if r["impl"] == "ibchar" else " (%s)" % r["impl"]
    rows[(label, r["ranks"])] = float(r["p50_us"])
pts = list(csv.DictReader(open(d + "/barrier_latency.data.csv")))
bad = [p for p in pts if abs(float(p["y"]) - rows[(p["series"], p["x"])]) > 1e-9]
print("%d points, %d differ" % (len(pts), len(bad)))
sys.exit(1 if bad or len(pts) != len(rows) else 0)
EOF
ok $? "barrier_latency plots the CSV's p50 for every row ($(cat "$tmp/cmp"))"
[ -s "$tmp/a/barrier_fanin.data.csv" ]; ok $? "every figure writes its .data.csv"

synth "$tmp/b" 0
"$PY" "$PLOTS/barrier_factor.py" "$tmp/b" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/b/barrier_factor.png" ]; ok $? "barrier_factor.py without MPI rows falls back to PE/DS (exit $rc)"

"$IBCHAR" plot "$tmp/none" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ -s "$tmp/err" ]; ok $? "a missing directory exits 2 with a message (got $rc)"
mkdir -p "$tmp/empty"
"$IBCHAR" plot "$tmp/empty" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'results.csv' "$tmp/err"; ok $? "a directory without results.csv exits 2 naming it (got $rc)"
"$PY" "$PLOTS/barrier_latency.py" "$tmp/empty" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "barrier_latency.py without results.csv exits 2 (got $rc)"

mkdir -p "$tmp/probe"
echo "$HDR" >"$tmp/probe/results.csv"
echo "P1,probe,probe-cross,ibchar,shm,fork,1,2,2,0,,100,10,0.1,0.2,0.2,0.3,0.4,0.01,0.19,0.21,0.01,spin,0,,x=1" >>"$tmp/probe/results.csv"
"$PY" "$PLOTS/barrier_fanin.py" "$tmp/probe" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'no barrier rows' "$tmp/err"; ok $? "a barrier script on a run without barrier rows exits 2 (got $rc)"

"$IBCHAR" plot "$tmp/probe" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/probe/probe.png" ] && [ ! -e "$tmp/probe/barrier_latency.png" ]
ok $? "ibchar plot runs only the scripts of the suites present (probe; exit $rc)"

"$IBCHAR" plot >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "ibchar plot without DIR exits 2 (got $rc)"
"$IBCHAR" plot --help >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^Usage: ibchar plot' "$tmp/out"; ok $? "ibchar plot --help"

mkdir -p "$tmp/plots"
printf 'import sys\nsys.exit(3)\n' >"$tmp/plots/barrier_broken.py"
IBC_PLOTS=$tmp/plots "$IBCHAR" plot "$tmp/a" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q 'barrier_broken.py failed' "$tmp/err"; ok $? "a failing script makes ibchar plot fail (got $rc)"
IBC_PLOTS=$tmp/nowhere "$IBCHAR" plot "$tmp/a" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q 'plots directory' "$tmp/err"; ok $? "a missing plots directory is reported (got $rc)"
