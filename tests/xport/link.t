#!/bin/sh
# The link suite (bench/link) on shm: every variant writes a validated row per size.
BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
BIN=$BUILD/bin/ibchar-link
echo "1..6"
if [ ! -x "$BIN" ]; then
	echo "not ok 1 - $BIN is built"
	for i in 2 3 4 5 6; do echo "ok $i # SKIP no binary"; done
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
rows=$(tail -n +2 "$CSV" 2>/dev/null | grep -c ',link,')
if [ "$rows" -eq 12 ]; then echo "ok 3 - 12 rows (4 variants x 3 sizes)"; else
	echo "not ok 3 - 12 rows (4 variants x 3 sizes), got $rows"; fi
bad=$(tail -n +2 "$CSV" 2>/dev/null | grep ',link,' | grep -vc 'valid=1')
if [ "$bad" -eq 0 ] && [ "$rows" -gt 0 ]; then echo "ok 4 - every row validated"; else
	echo "not ok 4 - every row validated ($bad not)"; fi
v=$(tail -n +2 "$CSV" 2>/dev/null | cut -d, -f3 | sort -u | tr '\n' ' ')
if [ "$v" = "read-lat send-lat write-bw write-lat " ]; then echo "ok 5 - variants: $v"; else
	echo "not ok 5 - variants: $v"; fi
if grep -q ',link,write-bw,ibchar,shm,.*window=64;MBps=' "$CSV" 2>/dev/null; then
	echo "ok 6 - write-bw rows carry window and MB/s on xport shm"; else
	echo "not ok 6 - write-bw rows carry window and MB/s on xport shm"; fi
