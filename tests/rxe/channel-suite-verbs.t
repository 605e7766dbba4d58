#!/bin/bash
# tests/rxe/channel-suite-verbs.t - the channel suite on the verbs transport
# in one Soft-RoCE guest: every variant validated at 8 B and 64 KiB, and the
# connection table with the device's real QP count (make check-rxe).
# IBC_RXE_RESULTS=DIR keeps the results.
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
B=$BUILD/bin/ibchar-channel
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$B" ] || tap_skip_all "$B not built"
tap_plan 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
timeout 600 "$B" --xport verbs --ranks 2 --sizes 8,65536 --iters 100 --warmup 10 --budget 5 \
	--validate --out "$out" -q >"$out/log" 2>&1 || rc=$?
tap_ok "$rc" "ibchar-channel --xport verbs --validate" "$out/log"
bad=0
for v in $("$B" --list | grep -vx probe-write); do
	grep ",channel,$v,ibchar,verbs,.*valid=1" "$out/results.csv" >/dev/null 2>&1 ||
		{ echo "# no validated row of $v"; bad=1; }
done
# the floor probe-write carries nothing to check: its rows, no valid=
grep ",channel,probe-write,ibchar,verbs," "$out/results.csv" 2>/dev/null | grep -q "valid=" && bad=1
grep -q ",channel,probe-write,ibchar,verbs," "$out/results.csv" 2>/dev/null || bad=1
tap_ok "$bad" "... every variant validated on verbs (probe-write: rows, no valid=)"
grep -Eq '^measured,verbs,1,2,2,rc-ondemand,[1-9]' "$out/channel-conn.csv" 2>/dev/null
tap_ok $? "... channel-conn.csv: the QPs the device really made"
[ -n "${IBC_RXE_RESULTS:-}" ] && cp "$out"/*.csv "$IBC_RXE_RESULTS/" 2>/dev/null
exit $((TAP_FAILED > 0))
