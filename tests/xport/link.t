#!/bin/sh
# The link suite (impl/link) on shm: every variant writes a validated row per
# size, the bandwidth rows carry MB/s, the latency rows the back-to-back
# figures.
BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
BIN=$BUILD/bin/ibchar-link
echo "1..8"
if [ ! -x "$BIN" ]; then
	echo "not ok 1 - $BIN is built"
	for i in 2 3 4 5 6 7 8; do echo "ok $i # SKIP no binary"; done
	exit 0
fi
echo "ok 1 - $BIN is built"
OUT=$(mktemp -d /tmp/ibc-link-test.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
"$BIN" --xport shm --ranks 2 --sizes 1,4K,1M --iters 40 --warmup 4 --budget 5 --validate \
	--quiet --out "$OUT" 2>"$OUT/stderr"
rc=$?
if [ $rc -eq 0 ]; then echo "ok 2 - ibchar-link --xport shm --validate exits 0"; else
	echo "not ok 2 - ibchar-link --xport shm --validate exits 0 (got $rc)"; sed 's/^/# /' "$OUT/stderr"; fi
CSV=$OUT/results.csv
want=$("$BIN" --list | sort | tr '\n' ' ')
nv=$(echo "$want" | wc -w)
rows=$(tail -n +2 "$CSV" 2>/dev/null | grep -c ',link,')
if [ "$rows" -eq $((nv * 3)) ]; then echo "ok 3 - $((nv * 3)) rows ($nv variants x 3 sizes)"; else
	echo "not ok 3 - $((nv * 3)) rows ($nv variants x 3 sizes), got $rows"; fi
bad=$(tail -n +2 "$CSV" 2>/dev/null | grep ',link,' | grep -vc 'valid=1')
if [ "$bad" -eq 0 ] && [ "$rows" -gt 0 ]; then echo "ok 4 - every row validated"; else
	echo "not ok 4 - every row validated ($bad not)"; fi
v=$(tail -n +2 "$CSV" 2>/dev/null | cut -d, -f3 | sort -u | tr '\n' ' ')
if [ "$v" = "$want" ]; then echo "ok 5 - variants: $v"; else
	echo "not ok 5 - variants: $v (want $want)"; fi
if grep -q ',link,write-bw-burst,ibchar,shm,.*window=64;burst=64;MBps=' "$CSV" 2>/dev/null &&
   grep -q ',link,write-bw-stream,ibchar,shm,.*window=64;msgs=[0-9]*;MBps=' "$CSV" 2>/dev/null; then
	echo "ok 6 - write-bw-burst and write-bw-stream rows carry the window and MB/s"; else
	echo "not ok 6 - write-bw-burst and write-bw-stream rows carry the window and MB/s"; fi
c=$(awk -F, 'NR > 1 && ($3 ~ /^write-lat/ || $3 == "send-lat") && $NF ~ /paper_us=[0-9.]+;b2b_p50_us=[0-9.]+/ { c++ } END { print c + 0 }' "$CSV")
if [ "$c" -eq 12 ]; then echo "ok 7 - the ping-pong rows carry paper_us and b2b_p50_us ($c)"; else
	echo "not ok 7 - the ping-pong rows carry paper_us and b2b_p50_us ($c of 12)"; fi
c=$(grep -c 'poll=last-byte' "$CSV")
if [ "$c" -eq 3 ]; then echo "ok 8 - write-lat-lastbyte says how it polls"; else
	echo "not ok 8 - write-lat-lastbyte says how it polls ($c)"; fi
