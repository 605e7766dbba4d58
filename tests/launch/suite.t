#!/bin/sh
# The launch suite (ibchar-launch-bench, `ibchar run launch`): on this host,
# tree, flat and mpirun.mpich start the probe (true, the PMI exchange) and an
# MPICH program, every job's processes are all stamped, the phases are
# consistent (spawn <= total, init >= 0, a row per launcher x program x phase
# with `trials` samples), the cache policies write their per-stage rows and the
# stage-count sweep (launch-cache.csv, messages into the root and agent memory
# growing with the stages for hcs, bounded for hcmab-lru), Table 3.1 is
# computed; a failing launcher (a fake mpirun.mpich) costs its rows only and
# the exit status says so; bad input exits 2.  With root: the same across 3
# test hosts with Open MPI, and the host multiplier.
. "$(dirname "$0")/../launcher/lib.sh"
BENCH=$IBC_BUILD/bin/ibchar-launch-bench
IBCHAR=$IBC_BUILD/bin/ibchar
[ -x "$BENCH" ] || skip_all "ibchar-launch-bench not built"
PY=python3
command -v mpirun.mpich >/dev/null 2>&1 && [ -x "$IBC_BUILD/bin/ibchar-launch-hello-mpich" ] && L=tree,flat,mpich || L=tree,flat

# rows <dir> <python expression over r (a row) that must hold for every launch row> -> count
rows() {
	$PY - "$1" "$2" <<'PYEOF'
import csv, sys
d, cond = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(open(d + "/results.csv")) if r["suite"] == "launch"]
ex = lambda r: dict(kv.split("=", 1) for kv in r["extra"].split(";") if "=" in kv)
bad = [r["variant"] for r in rows if not eval(cond, {"r": r, "x": ex(r), "f": float})]
print(len(rows) if not bad else "bad: " + " ".join(bad[:5]))
PYEOF
}

timeout 300 "$BENCH" --out "$TMP/a" --launchers $L --ppn 1,2 --trials 3 --stages 4 >"$TMP/out" 2>&1; rc=$?
is "$rc" 0 "ibchar-launch-bench --launchers $L --ppn 1,2 exits 0"
[ "$rc" = 0 ] || diag "$(tail -15 "$TMP/out")"
n=$(rows "$TMP/a" 'True')
nl=$(echo $L | tr ',' '\n' | wc -l)
# per ppn: launchers x (true: 2 phases + pmi: 3 + hello: 3) + 4 policies x 2 patterns
want=$(( 2 * (nl * 8 + 8) ))
[ -x "$IBC_BUILD/bin/ibchar-launch-hello-mpich" ] || want=$(( 2 * (nl * 5 + 8) ))
is "$n" "$want" "one row per launcher x program x phase and per policy x pattern, at each ppn"
is "$(rows "$TMP/a" 'x["kind"] != "phase" or r["iters"] == "3"')" "$want" "every phase row holds its 3 trials"
is "$(rows "$TMP/a" 'x["kind"] != "cache" or r["iters"] == "12"')" "$want" "every cache row holds 3 trials x 4 stages"
is "$(rows "$TMP/a" 'x["kind"] != "phase" or x["phase"] != "spawn" or f(r["p50_us"]) > 0')" "$want" "spawn > 0"
# spawn <= total, per launcher x program x ppn (medians of the same jobs)
$PY - "$TMP/a" >"$TMP/cmp" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1] + "/results.csv")) if r["suite"] == "launch"]
v = {(r["variant"], r["ppn"]): float(r["min_us"]) for r in rows}
bad = [k for k in v if k[0].endswith(":spawn") and v[k] > v[(k[0][:-6] + ":total", k[1])]]
bad += [k for k in v if k[0].endswith(":init") and v[k] < 0]
print("ok" if not bad else bad)
PYEOF
is "$(cat "$TMP/cmp")" ok "min spawn <= min total and init >= 0 for every launcher, program and ppn"
is "$(rows "$TMP/a" 'x["kind"] != "phase" or not x["launcher"].startswith("tree") or int(r["fanin"]) >= 1')" "$want" "tree rows carry the degree (fanin) and depth"
c=$($PY - "$TMP/a" <<'PYEOF'
import csv, sys
t = [r for r in csv.DictReader(open(sys.argv[1] + "/launch-cache.csv"))]
def mem(pol, st, ppn="2"):
    return [float(r["nla_mem_max"]) for r in t if r["policy"] == pol and r["stages"] == st and r["ppn"] == ppn and r["pattern"] == "allgather"][0]
out = []
out.append(sorted(set(r["stages"] for r in t)) == ["1", "2", "4"])
out.append(len(t) == 2 * 4 * 2 * 3)
out.append(mem("hcs", "4") > 3 * mem("hcs", "1"))          # grows with the stages
out.append(mem("hcmab-lru", "4") <= mem("hcmab-lru", "2") * 1.01)  # bounded: two stages
print(" ".join("1" if o else "0" for o in out))
PYEOF
)
is "$c" "1 1 1 1" "launch-cache.csv: stages 1,2,4 for 4 policies x 2 patterns x 2 ppn; hcs memory grows, hcmab-lru is bounded"
[ -s "$TMP/a/launch-memory.csv" ] && grep -q '^[^,]*,hcmab-lru,65536,64,' "$TMP/a/launch-memory.csv"
ok $? "launch-memory.csv: Table 3.1 computed up to 65536 processes"
grep -q '^launch_rsh,local' "$TMP/a/meta.csv"; ok $? "meta.csv records the remote shell"
ls "$TMP/a/.launch" >/dev/null 2>&1; sleep 0.3
is "$(agents_left)" 0 "no node agent left"

# a launcher that fails: its rows are missing, the others written, exit 1
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "fake mpirun failing" >&2\nexit 3\n' >"$TMP/bin/mpirun.mpich"
chmod +x "$TMP/bin/mpirun.mpich"
PATH="$TMP/bin:$PATH" timeout 120 "$BENCH" --out "$TMP/b" --launchers tree,mpich --programs true --caches none --trials 2 >"$TMP/out" 2>&1; rc=$?
is "$rc" 1 "a failing mpirun.mpich: exit 1"
grep -q "mpich true at 1x1 failed with exit 3" "$TMP/out"; ok $? "the failure is reported with its exit status"
is "$(rows "$TMP/b" 'x["launcher"] == "tree"')" 4 "tree's rows are written, mpich's are not"

# bad input
for bad in "--launchers nosuch" "--programs nosuch" "--caches nosuch" "--ppn 0" "--hosts 0" "--stages 0" \
	   "--hostnames a,b --hosts 3"; do
	"$BENCH" --out "$TMP/c" $bad >"$TMP/out" 2>&1; rc=$?
	is "$rc" 2 "bad input '$bad': exit 2 ($(head -1 "$TMP/out"))"
done

# through the runner
timeout 300 "$IBCHAR" run launch --ppn 2 --iters 2 --variants tree,flat --out "$TMP/d" >"$TMP/out" 2>&1; rc=$?
is "$rc" 0 "ibchar run launch --ppn 2 --iters 2 --variants tree,flat exits 0"
is "$(rows "$TMP/d" 'x["launcher"] in ("tree", "flat")')" "$(( 2 * 8 + 8 ))" "ibchar run launch: tree and flat rows, and the cache rows"
grep -q '^launch: 1 hosts x 2' "$TMP/out"; ok $? "a progress line per point"

why=$(netns_why)
if [ -n "$why" ]; then
	skip "3 test hosts: $why"; skip "3 test hosts: $why"; skip "3 test hosts: $why"; skip "multiplier: $why"
	skip "--rsh-delay: $why"
elif hosts_up 3; then
	LH=tree,flat
	command -v mpirun.mpich >/dev/null 2>&1 && LH=$LH,mpich
	command -v mpirun.openmpi >/dev/null 2>&1 && [ -x "$IBC_BUILD/bin/ibchar-launch-hello-openmpi" ] && LH=$LH,openmpi
	timeout 300 "$BENCH" --out "$TMP/e" --hosts 1,3 --ppn 2 --launchers $LH --caches hcs,hcmab --stages 2 --trials 2 >"$TMP/out" 2>&1; rc=$?
	is "$rc" 0 "3 test hosts x 2, $LH: exit 0"
	[ "$rc" = 0 ] || diag "$(tail -15 "$TMP/out")"
	is "$(rows "$TMP/e" 'r["ranks"] != "6" or x["hosts"] == "3"')" "$(rows "$TMP/e" 'True')" "rows at 6 ranks span the 3 hosts"
	grep -q "growth with the number of node agents" "$TMP/out"
	is "$?" 1 "two host counts: no growth fit (it needs three)"
	timeout 300 "$BENCH" --out "$TMP/f" --hosts 3 --ppn 2 --mult 1,20 --launchers tree,mpich --programs true --caches none --trials 2 >"$TMP/out" 2>&1; rc=$?
	m=$(rows "$TMP/f" '(x["mult"] == "1") or (x["launcher"] == "tree" and r["nodes"] == "60" and r["ranks"] == "120")')
	is "$rc:$m" "0:$(rows "$TMP/f" 'True')" "--mult 20: 60 node agents on 3 hosts (a host list of 420 bytes), 120 processes, tree only"
	[ "$rc" = 0 ] || diag "$(tail -5 "$TMP/out")"
	# a remote shell with 30 ms of connection latency: the tree of 3 agents (k = 1 by the
	# depth rule: a chain) pays it 3 times in a row, flat once per process, in parallel
	timeout 300 "$BENCH" --out "$TMP/g" --hosts 3 --ppn 1 --rsh-delay 30 --launchers tree,flat,mpich --programs true --caches none --trials 2 >"$TMP/out" 2>&1; rc=$?
	is "$rc:$(rows "$TMP/g" 'x["rsh_delay_ms"] == "30" and (x["phase"] != "spawn" or f(r["min_us"]) >= 30000) and (x["launcher"] != "tree" or x["phase"] != "spawn" or f(r["min_us"]) >= 90000)')" "0:6" \
		"--rsh-delay 30: every launcher's spawn >= 30 ms, the 3-deep tree's >= 90 ms"
	sleep 0.3
else
	ok 1 "scripts/testhosts up 3"
fi
"$BENCH" --out "$TMP/h" --rsh-delay 5 >"$TMP/out" 2>&1
is "$?" 2 "--rsh-delay without a remote shell: exit 2 ($(head -1 "$TMP/out"))"
is "$(agents_left)" 0 "no node agent left at the end"
done_testing
