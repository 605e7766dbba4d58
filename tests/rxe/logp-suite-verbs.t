#!/bin/bash
# tests/rxe/logp-suite-verbs.t - the LoP suite on the verbs transport in one
# Soft-RoCE guest, with the barrier and all-to-all suites it predicts: the
# kernels' rows at N = 2, 4, 8, the fits (fits.csv, verbs rows fitted at
# N = 8), rtt-mcast at each N (and back to back, where a UD datagram that
# finds no receive is lost), and the closed loop's table (lop-model.csv)
# for every barrier algorithm, xchg-write, xchg-pool and
# xchg-write-readout-flag at each N costing the exchange rounds (make check-rxe).  IBC_RXE_RESULTS=DIR keeps the results.
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
B=$BUILD/bin/ibchar
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$B" ] && [ -x "$BUILD/bin/ibchar-logp" ] || tap_skip_all "$B or ibchar-logp not built"
tap_plan 7
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
# --timeout 300: in a TCG guest the logp point at N = 8 (some 140 kernel
# instances, each setting up its queue pairs) takes 60-70 s, about the
# default deadline (3 x the budget + 60 s) without a new row
timeout 900 "$B" run logp barrier alltoall --xport verbs --ranks 2,4,8 --sizes 1 --iters 100 \
	--budget 3 --timeout 300 --out "$out" >"$out/sum" 2>"$out/log" || rc=$?
tap_ok "$rc" "ibchar run logp barrier alltoall --xport verbs (N = 2, 4, 8)" "$out/log"
c=$(grep -c ',logp,rtt-write-1n,ibchar,verbs,.*,8,1,[1-7],' "$out/results.csv" 2>/dev/null)
[ "$c" -eq 7 ]
tap_ok $? "... rtt-write-1n at p = 1..7 on 8 ranks over verbs ($c rows)"
c=$(grep -cE ',verbs,[a-z0-9-]+,1,min,(ov|rtt),8,.*,ok,[0-9.]+,(rtt|ov)[1-6]' "$out/fits.csv" 2>/dev/null)
[ "$c" -ge 8 ]
tap_ok $? "... fits.csv: verbs kernels fitted at N = 8 ($c of 16, min)"
bad=0
for v in rpe rds rgm pe ds; do
	for n in 2 4 8; do
		grep -q "^barrier,$v,verbs,$n," "$out/lop-model.csv" 2>/dev/null ||
			{ echo "# no prediction of $v at N = $n"; bad=1; }
	done
done
tap_ok "$bad" "... lop-model.csv predicts every barrier algorithm on verbs"
# rtt-mcast: a UD multicast datagram and a write back, at each N, and the
# closed loop costs RGM's release by it
c=$(grep -cE ',logp,rtt-mcast,ibchar,verbs,[^,]*,[^,]*,[^,]*,[248],1,,' "$out/results.csv" 2>/dev/null)
[ "$c" -eq 3 ] && grep -q '^multicast release: costed by rtt-mcast' "$out/sum"
tap_ok $? "... rtt-mcast at N = 2, 4, 8 over verbs ($c rows), RGM's release costed by it"
# back to back rank 1 posts its next receive before its write back: else
# the next datagram would find none, be lost and sent again after 2 ms.
# Every N runs the loop (its length cut by --budget: 10-80 calls in a TCG
# guest); at N = 2, the one not oversubscribed, fewer than half its calls
# sent again (a rank late by 2 ms in the timed iterations may send one)
bad=$(grep ',logp,rtt-mcast,ibchar,verbs,' "$out/results.csv" 2>/dev/null | awk -F, '{
	n = $NF; r = -1; b = 0
	if (match(n, /resent=[0-9]+/)) r = substr(n, RSTART + 7, RLENGTH - 7) + 0
	if (match(n, /b2b_n=[0-9]+/)) b = substr(n, RSTART + 6, RLENGTH - 6) + 0
	rows++
	if (b < 1 || r < 0 || ($9 == 2 && r * 2 >= b)) print "N = " $9 ": b2b_n " b ", resent " r
} END { if (rows != 3) print rows " rows, not 3" }')
[ -z "$bad" ]
tap_ok $? "... rtt-mcast back to back over verbs: the datagrams found their receives${bad:+ ($bad)}"
# xchg-write, xchg-pool and xchg-write-readout-flag: every pair of ranks
# writing (sending) each other at once, at each N; the closed loop costs
# the exchange rounds by them
c=$(grep -cE ',logp,xchg-(write|pool|write-readout-flag),ibchar,verbs,[^,]*,[^,]*,[^,]*,[248],1,,' \
	"$out/results.csv" 2>/dev/null)
[ "$c" -eq 9 ] && grep -q '^exchange rounds of writes: costed in LoP-RTT by xchg-write' "$out/sum" &&
	grep -q '^exchange rounds of sends: costed in LoP-RTT by xchg-pool' "$out/sum" &&
	grep -q '^exchange rounds of blocks: costed in LoP-RTT by xchg-write-readout-flag' "$out/sum"
tap_ok $? "... xchg-write, xchg-pool, xchg-write-readout-flag at N = 2, 4, 8 over verbs ($c rows), the exchange rounds costed by them"
sed -n '/LoP closed loop/,$p' "$out/sum" | sed 's/^/# /' | head -60
[ -n "${IBC_RXE_RESULTS:-}" ] && cp "$out"/*.csv "$out/sum" "$out/log" "$IBC_RXE_RESULTS/" 2>/dev/null
exit $((TAP_FAILED > 0))
