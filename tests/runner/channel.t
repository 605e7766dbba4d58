#!/bin/sh
# `ibchar run channel` end to end on shm: every variant writes a validated
# row (--validate checks the bytes), the designs' counters say what they
# did (basic writes a head pointer per put, piggyback none; zcopy reads),
# the connection table (a measured row; Table 4.1 computed to 64 K),
# N = 3 is refused for the two-rank suite; with the Open MPI build, mpi and
# mpi-bw rows beside the designs; the figures, whose plotted latency is the
# CSV's p50; channel_floor's bars are the rows' back-to-back times.  The
# floor probe-write has a row, with no valid= (nothing travels to check).
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR"
tap_tmp chan
echo "1..15"

timeout 300 "$IBCHAR" run channel --ranks 2 --sizes 8,65536 --iters 100 --validate --xport shm \
	--out "$tmp/a" >"$tmp/sum" 2>"$tmp/err"; rc=$?
ok $rc "ibchar run channel --validate exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -10
want=$("$BUILD/bin/ibchar-channel" --list | grep -vx probe-write | wc -l)
got=$(awk -F, 'NR > 1 && $2 == "channel" && $26 ~ /valid=1/ { print $3 }' "$tmp/a/results.csv" |
	sort -u | wc -l)
[ "$got" -eq "$want" ] && [ "$want" -ge 20 ]; ok $? "... every variant validated ($got of $want)"
awk -F, 'NR > 1 && $3 == "probe-write" { n++; if ($26 ~ /valid=/) bad = 1 } END { exit !(n == 2 && !bad) }' \
	"$tmp/a/results.csv"
ok $? "... probe-write, the floor: a row per size, no valid= on it"
awk -F, 'NR > 1 && $3 == "basic" && $10 == 8 && $26 ~ /head_writes=[1-9]/ { b = 1 }
	 NR > 1 && $3 == "piggyback" && $10 == 8 && $26 ~ /head_writes=0;/ { p = 1 }
	 NR > 1 && $3 == "zcopy" && $10 == 65536 && $26 ~ /zcopy_reads=[1-9]/ { z = 1 }
	 END { exit !(b && p && z) }' "$tmp/a/results.csv"
ok $? "... basic writes head pointers, piggyback none, zcopy reads at 64 KiB"
# the counters are the timed iterations', not their primes' too: basic writes
# two head pointers a ping-pong (one a side), piggyback beside it primes both
timeout 300 "$IBCHAR" run channel --ranks 2 --sizes 8 --iters 300 --sync barrier --xport shm \
	--variants basic,piggyback --out "$tmp/cnt" >/dev/null 2>"$tmp/err"
awk -F, 'NR > 1 && $3 == "basic" && $26 ~ /primed=1/ && $26 ~ /head_writes=600(;|$)/ { n++ }
	 END { exit n != 1 }' "$tmp/cnt/results.csv"
ok $? "... primed, basic's counters count its 300 timed iterations only: head_writes=600 ($(
	awk -F, 'NR > 1 && $3 == "basic"' "$tmp/cnt/results.csv" | tr ';' '\n' | grep head_writes))"
grep -q '^measured,shm,1,2,2,' "$tmp/a/channel-conn.csv"
ok $? "... channel-conn.csv holds the row measured on the transport"
grep -q '^computed,shm,1024,64,65536,rc-all,65535,0,' "$tmp/a/channel-conn.csv" &&
	grep -q '^computed,shm,1024,64,65536,xrc,1024,1,' "$tmp/a/channel-conn.csv"
ok $? "... and Table 4.1 to 64 K processes: RC n c - 1 = 65535, XRC n = 1024 per process"
"$IBCHAR" run channel --ranks 3 --out "$tmp/n3" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "channel" "$tmp/err"; ok $? "N = 3 is refused for the two-rank suite (exit $rc)"

if [ -x "$BUILD/bin/ibchar-channel-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	timeout 300 "$IBCHAR" run channel --mpi openmpi --ranks 2 --sizes 8,65536 --iters 100 \
		--variants piggyback,piggyback-bw,mpi,mpi-bw --validate --xport shm --out "$tmp/b" \
		>"$tmp/sum" 2>"$tmp/err"; rc=$?
	cnt=$(grep -c ',channel,mpi.*,openmpi,.*valid=1' "$tmp/b/results.csv" 2>/dev/null)
	[ $rc -eq 0 ] && [ "$cnt" -eq 4 ]
	ok $? "--mpi openmpi: mpi and mpi-bw rows beside the designs, validated ($cnt of 4)"
	# at the sync step a rank turns its MPI's progress too: Open MPI's 64 KiB
	# MPI_Isend of mpi-bw waited for the receiver, which waited at the sync
	# step for the sender (a hang, every run, before)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 "$IBCHAR" run channel \
		--mpi openmpi --ranks 2 --sizes 65536 --budget 1 --sync barrier --variants mpi-bw \
		--timeout 60 --xport shm --out "$tmp/c" >"$tmp/sum" 2>"$tmp/err"; rc=$?
	cnt=$(grep -c ',channel,mpi-bw,openmpi,' "$tmp/c/results.csv" 2>/dev/null)
	[ $rc -eq 0 ] && [ "$cnt" -eq 1 ]
	ok $? "--mpi openmpi --sync barrier: mpi-bw at 64 KiB finishes (exit $rc, $cnt row)"
	[ $rc -eq 0 ] || tail -4 "$tmp/err" | sed 's/^/# /'
else
	echo "ok 9 # SKIP no Open MPI build"
	echo "ok 10 # SKIP no Open MPI build"
fi

PY=
for c in ${IBC_PYTHON:-} python3 /usr/bin/python3; do
	if "$c" -c 'import matplotlib' >/dev/null 2>&1; then PY=$c; break; fi
done
if [ -n "$PY" ]; then
	IBC_PYTHON=$PY "$IBCHAR" plot "$tmp/a" >"$tmp/plot" 2>&1
	[ -s "$tmp/a/channel_latency.png" ] && [ -s "$tmp/a/channel_sweep.png" ] &&
		[ -s "$tmp/a/channel_conn.png" ]
	ok $? "ibchar plot draws channel_latency, channel_sweep and channel_conn"
	"$PY" - "$tmp/a" <<'PYEOF'
import csv, sys
d = sys.argv[1]
want = {(r["variant"], int(r["bytes"])): float(r["p50_us"])
        for r in csv.DictReader(open(d + "/results.csv"))
        if r["suite"] == "channel" and r["variant"] in ("basic", "piggyback", "zcopy")}
got = {(r["series"], int(r["x"])): float(r["y"])
       for r in csv.DictReader(open(d + "/channel_latency.data.csv")) if r["panel"].startswith("latency")}
sys.exit(0 if want and all(abs(got.get(k, -1) - v) < 1e-9 for k, v in want.items()) else 1)
PYEOF
	ok $? "... the plotted latencies are the CSV's p50"
	"$PY" - "$tmp/a" <<'PYEOF'
import csv, sys
d = sys.argv[1]
want = {(r["variant"], int(r["bytes"])): int(r["bytes"]) / float(r["p50_us"])
        for r in csv.DictReader(open(d + "/results.csv"))
        if r["suite"] == "channel" and r["variant"] == "pipeline-bw"}
got = {(r["series"].split(" ")[0], int(r["x"])): float(r["y"])
       for r in csv.DictReader(open(d + "/channel_sweep.data.csv"))}
sys.exit(0 if want and all(abs(got.get(k, -1) - v) < 1e-6 * v for k, v in want.items()) else 1)
PYEOF
	ok $? "... the plotted bandwidths are bytes / the CSV's time per message"
	[ -s "$tmp/a/channel_floor.png" ]; ok $? "ibchar plot draws channel_floor"
	"$PY" - "$tmp/a" <<'PYEOF'
import csv, sys
d = sys.argv[1]
want = {}
for r in csv.DictReader(open(d + "/results.csv")):
    ex = dict(kv.split("=", 1) for kv in r["extra"].split(";") if "=" in kv)
    if r["suite"] == "channel" and r["variant"] in ("probe-write", "rdma-write", "piggyback") \
            and "b2b_p50_us" in ex and (r["variant"] != "probe-write" or int(r["bytes"]) <= 64):
        want[(r["variant"], int(r["bytes"]))] = float(ex["b2b_p50_us"])
got = {(r["series"], int(r["x"])): float(r["y"])
       for r in csv.DictReader(open(d + "/channel_floor.data.csv")) if r["panel"].startswith("latency")}
sys.exit(0 if len(want) == 5 and all(abs(got.get(k, -1) - v) < 1e-9 for k, v in want.items()) else 1)
PYEOF
	ok $? "... its latency bars are the rows' back-to-back times (probe-write up to 64 B)"
else
	for k in 11 12 13 14 15; do echo "ok $k # SKIP no matplotlib"; done
fi
