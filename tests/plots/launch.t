#!/bin/sh
# The launch figures (plots/launch_*.py) on a small real run of the launch
# suite (tree and flat on this host, c = 1, 2, the four cache policies):
# `ibchar plot` writes and lists launch_phases, launch_cache and
# launch_memory; the plotted numbers (.data.csv) are the CSVs': every
# phase point is a results.csv p50 in ms, every cache point a results.csv
# p50 or its root_msgs_per_stage, the measured memory launch-cache.csv's and
# the table launch-memory.csv's; without launch-cache.csv the memory figure
# says so (exit 0).  Skips without python3 + matplotlib.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR" "$BUILD/bin/ibchar-launch-bench"
NT=7
PY=
for c in ${IBC_PYTHON:-} python3 /usr/bin/python3; do
	if "$c" -c 'import matplotlib' >/dev/null 2>&1; then PY=$c; break; fi
done
echo "1..$NT"
if [ -z "$PY" ]; then
	i=1
	while [ $i -le $NT ]; do echo "ok $i # SKIP python3-matplotlib is not installed"; i=$((i + 1)); done
	exit 0
fi
export IBC_PYTHON=$PY
unset IBC_PLOTS
tap_tmp launchplot
FIGS="launch_phases launch_cache launch_memory"

timeout 300 "$IBCHAR" run launch --ppn 1,2 --variants tree,flat --iters 2 --out "$tmp/a" >"$tmp/run" 2>&1; rc=$?
ok $rc "ibchar run launch --ppn 1,2 --variants tree,flat exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/run" | tail -10
"$IBCHAR" plot "$tmp/a" >"$tmp/out" 2>"$tmp/err"; rc=$?
ok $rc "ibchar plot exits 0 (got $rc)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -10
miss=
for f in $FIGS; do
	{ [ -s "$tmp/a/$f.png" ] && [ -s "$tmp/a/$f.pdf" ] && [ -s "$tmp/a/$f.data.csv" ] &&
		grep -qx "$tmp/a/$f.png" "$tmp/out"; } || miss="$miss $f"
done
[ -z "$miss" ]; ok $? "launch_phases, launch_cache, launch_memory: .png/.pdf/.data.csv written, listed${miss:+ (missing:$miss)}"

"$PY" - "$tmp/a" >"$tmp/cmp" 2>&1 <<'PYEOF'
import csv, sys
d = sys.argv[1]
rows = [r for r in csv.DictReader(open(d + "/results.csv")) if r["suite"] == "launch"]
ex = lambda r: dict(kv.split("=", 1) for kv in r["extra"].split(";") if "=" in kv)
data = lambda f: list(csv.DictReader(open("%s/%s.data.csv" % (d, f))))
out = []
# phases: panel "hello: total (..." series "tree c=2": x ranks, y p50 / 1000
ph = data("launch_phases")
bad, n = 0, 0
for p in ph:
    if not p["panel"].startswith(("hello:", "pmi:")):
        continue
    prog, phase = p["panel"].split(":")[0], p["panel"].split(": ")[1].split(" ")[0]
    lname, kv = p["series"].split(" ")[:2]
    k, v = kv.split("=")
    want = [float(r["p50_us"]) / 1e3 for r in rows if r["variant"] == "%s:%s:%s" % (lname, prog, phase)
            and (r["ppn"] if k == "c" else ex(r)["hosts"]) == v and r["ranks"] == p["x"]]
    n += 1
    bad += not (len(want) == 1 and abs(want[0] - float(p["y"])) < 1e-9 * max(1, want[0]))
want_n = sum(1 for r in rows if ex(r)["kind"] == "phase" and ex(r)["program"] == "hello")
out.append("phases %d/%d bad %d" % (n, want_n, bad))
# cache: time panels p50 / 1000; message panel root_msgs_per_stage
ca = data("launch_cache")
bad, n = 0, 0
for p in ca:
    pol, c = p["series"].split(" c=")
    pat = "ring" if p["panel"].startswith("1:2") else "allgather"
    r = [r for r in rows if r["variant"] == "cache:%s:%s" % (pol, pat) and r["ppn"] == c and r["ranks"] == p["x"]]
    want = float(ex(r[0])["root_msgs_per_stage"]) if "messages" in p["panel"] else float(r[0]["p50_us"]) / 1e3
    n += 1
    bad += abs(want - float(p["y"])) > 1e-9 * max(1, want)
out.append("cache %d bad %d" % (n, bad))
# memory: measured from launch-cache.csv, table from launch-memory.csv
cache = list(csv.DictReader(open(d + "/launch-cache.csv")))
mem = list(csv.DictReader(open(d + "/launch-memory.csv")))
bad, n = 0, 0
for p in data("launch_memory"):
    if p["panel"].startswith("measured"):
        top = max(int(r["ranks"]) for r in cache if r["pattern"] == "allgather")
        w = [float(r["nla_mem_max"]) / 1024 for r in cache if r["pattern"] == "allgather" and int(r["ranks"]) == top
             and r["policy"] == p["series"] and r["stages"] == p["x"]]
    else:
        w = [float(r["bytes_per_nla"]) / 1024 for r in mem if r["policy"] == p["series"] and r["ranks"] == p["x"]
             and r["pairs"] == "16"]
    n += 1
    bad += not (len(w) == 1 and abs(w[0] - float(p["y"])) < 1e-9 * max(1, w[0]))
out.append("memory %d bad %d" % (n, bad))
print("\n".join(out))
PYEOF
grep -q '^phases \([0-9]*\)/\1 bad 0$' "$tmp/cmp"; ok $? "launch_phases: every hello row is plotted, at its p50 in ms ($(sed -n 1p "$tmp/cmp"))"
grep -q '^cache [1-9][0-9]* bad 0$' "$tmp/cmp"; ok $? "launch_cache: times and root messages are the rows' ($(sed -n 2p "$tmp/cmp"))"
grep -q '^memory [1-9][0-9]* bad 0$' "$tmp/cmp"; ok $? "launch_memory: measured and computed are the CSVs' ($(sed -n 3p "$tmp/cmp"))"
[ -s "$tmp/cmp" ] && grep -q ' bad ' "$tmp/cmp" || sed 's/^/# /' "$tmp/cmp" | tail -5

rm "$tmp/a/launch-cache.csv" "$tmp/a/launch-memory.csv"
"$PY" "$(dirname "$0")/../../plots/launch_memory.py" "$tmp/a" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/a/launch_memory.png" ]; ok $? "launch_memory without its CSVs: a message, exit 0 (got $rc)"
