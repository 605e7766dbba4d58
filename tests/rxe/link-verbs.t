#!/bin/bash
# tests/rxe/link-verbs.t - the link suite on verbs beside perftest:
# `ibchar-link --xport verbs --perftest` writes ibchar rows for every variant
# and impl=perftest rows for the same sizes (ib_write_lat as
# write-lat-lastbyte, ib_write_bw as write-bw-stream, one figure: n=1 and no
# spread); the write rows are echoed as TAP diagnostics for the notes.
# Skips where no RDMA device has an active port (plain make check).
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
BIN=$BUILD/bin/ibchar-link
SIZES=${IBC_TEST_LINK_SIZES:-8,4K,64K}
nsizes=$(echo "$SIZES" | tr ',' '\n' | grep -c .)
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$BIN" ] || tap_skip_all "$BIN not built"
if ! command -v ib_write_lat >/dev/null || ! command -v ib_write_bw >/dev/null; then
	tap_skip_all "perftest (ib_write_lat, ib_write_bw) not installed"
fi

tap_plan 7
OUT=$(mktemp -d "${TMPDIR:-/tmp}/ibc-link-verbs.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
rc=0
"$BIN" --xport verbs --perftest --ranks 2 --sizes "$SIZES" --iters 1000 --warmup 50 \
	--budget 5 --quiet --out "$OUT" 2>"$OUT/stderr" || rc=$?
tap_ok "$rc" "ibchar-link --xport verbs --perftest --sizes $SIZES exits 0" "$OUT/stderr"
CSV=$OUT/results.csv
rows() { tail -n +2 "$CSV" 2>/dev/null | grep -c ",link,$1,$2,verbs,"; }
nv=$("$BIN" --list | grep -c .)
n=$(rows '[a-z-]*' ibchar)
[ "$n" -eq $((nv * nsizes)) ]
tap_ok $? "impl=ibchar rows: $nv variants x $nsizes sizes (got $n)"
# perftest calibrates its cycle counter against gettimeofday and gives up on a
# busy host (a TCG guest on a shared machine), printing zeros; ibchar retries
# and then skips the point with that reason.  Such a skip is perftest's, not
# ours: it stands in for a row.  Any other missing row is a failure.
busy() { grep -c "perftest $1 at [0-9]* bytes skipped after .*(busy host)" "$OUT/stderr"; }
for v in write-lat-lastbyte:write-lat write-bw-stream:write-bw; do
	n=$(rows "${v%%:*}" perftest)
	b=$(busy "${v#*:}")
	v=${v%%:*}
	[ $((n + b)) -eq "$nsizes" ]
	tap_ok $? "impl=perftest $v rows, one per size (got $n, $b skipped: perftest's clock on a busy host)" "$OUT/stderr"
done
# a perftest bandwidth row is one figure: no spread, n=1
bad=$(tail -n +2 "$CSV" 2>/dev/null | grep ',link,write-bw-stream,perftest,' |
	awk -F, '$14 != "" || $19 != "" || $20 != "" || $NF !~ /(^|;)n=1(;|$)/' | wc -l)
[ "$bad" -eq 0 ]
tap_ok $? "perftest write-bw-stream rows leave min/stdev/CI empty and say n=1 ($bad bad)"
# the medians are positive numbers on every write row
hdr=$(head -n 1 "$CSV" 2>/dev/null)
col=$(echo "$hdr" | tr ',' '\n' | grep -nx p50_us | cut -d: -f1)
bad=$(tail -n +2 "$CSV" 2>/dev/null | grep ',link,write-' |
	awk -F, -v c="${col:-0}" '!(c > 0 && $c ~ /^[0-9]+([.][0-9]*)?$/ && $c + 0 > 0)' | wc -l)
[ "$bad" -eq 0 ] && [ -n "$col" ]
tap_ok $? "every write row has a positive median ($bad bad)"
# the port's own counters (hw_counters, rxe's sent_pkts among them) over each
# row's point (every variant timed there): at least a packet per timed iteration
dev=$(rdma_active_dev)
if [ -d "/sys/class/infiniband/${dev%%:*}/ports/1/hw_counters" ]; then
	bad=$(tail -n +2 "$CSV" 2>/dev/null | grep ',link,[a-z-]*,ibchar,verbs,' |
		awk -F, '{ n = 0; if (match($NF, /(^|;)dev_sent_pkts=[0-9]+/)) { s = substr($NF, RSTART, RLENGTH);
			sub(/.*=/, "", s); n = s + 0 } if (!(n >= $12 && $12 > 0)) print }' | wc -l)
	[ "$bad" -eq 0 ]
	tap_ok $? "every ibchar row says what the port sent over its point's measured phase: dev_sent_pkts >= iters ($bad bad)"
else
	tap_skip "the port's counters" "$dev has no hw_counters"
fi
echo "# variant impl bytes p50_us p99_us extra"
tail -n +2 "$CSV" 2>/dev/null | grep ',link,write-' |
	awk -F, -v h="$hdr" 'BEGIN { n = split(h, H, ","); for (i = 1; i <= n; i++) C[H[i]] = i }
		{ print "# " $C["variant"], $C["impl"], $C["bytes"], $C["p50_us"], $C["p99_us"], $C["extra"] }'
exit $((TAP_FAILED > 0))
