#!/bin/sh
# RGM's reliability (Kini et al. 4.3) through the barrier suite, with release
# datagrams discarded by their receivers (--mcast-drop, seeded) at 10% and
# 30%: every barrier validated, the releases recovered by NAK and
# retransmission (retransmits > 0; a pull, the fallback when a NAK goes
# unanswered for 200 ms, is the exception: fewer pulls than retransmissions;
# none on an idle host, where the root answers NAKs wherever it waits, a few
# dozen beside two busy loops), and the counters of the timed iterations balance
# against the injected drops: every datagram the root sent reached each
# member as new, duplicate or dropped, so
#   duplicates + mcast_drops - pulls = (N - 1) * retransmits
# (within 4 per member or 1%: a retransmission answering a NAK that was on
# its way may land after the last timed barrier, or one of the warm-up's in
# the first timed one),
# and mcast_drops / ((N - 1) * (barriers + retransmits)) is near the rate.
# IBC_TEST_XPORT picks the transport (shm here; verbs in make check-rxe).
. "$(dirname "$0")/../lib/tap.sh"
BIN=$BUILD/bin/ibchar-barrier
XPORT=${IBC_TEST_XPORT:-shm}
RANKS=${IBC_TEST_RGM_RANKS:-3 5}
ITERS=${IBC_TEST_RGM_ITERS:-1000}
tap_need "$BUILD/bin/ibchar-barrier"
tap_tmp rgm
set -- $RANKS
echo "1..$(($# * 2 * 4))"
for N in $RANKS; do
	for p in 0.1 0.3; do
		out=$tmp/n$N-p$p
		timeout 300 "$BIN" --xport "$XPORT" --ranks "$N" --variants rgm --fanin 1 \
			--mcast-drop "$p" --iters "$ITERS" --warmup 20 --budget 60 --validate \
			--quiet --out "$out" >/dev/null 2>"$tmp/err"; rc=$?
		ok $rc "N=$N drop=$p on $XPORT: the run succeeds"
		[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -10
		row=$(grep ',barrier,rgm,' "$out/results.csv" 2>/dev/null | head -n 1)
		echo "$row" | grep -q 'valid=1'; ok $? "N=$N drop=$p: every barrier valid"
		res=$(echo "$row" | awk -F, -v N="$N" -v p="$p" '
			{ n = split($NF, kv, ";"); for (i = 1; i <= n; i++) { split(kv[i], a, "="); e[a[1]] = a[2] }
			  T = $12 + e["late_iters"]
			  lhs = e["duplicates"] + e["mcast_drops"] - e["pulls"]; rhs = (N - 1) * e["retransmits"]
			  d = lhs - rhs; if (d < 0) d = -d
			  rate = e["mcast_drops"] / ((N - 1) * (T + e["retransmits"]))
			  steady = (e["retransmits"] > 0 && e["pulls"] < e["retransmits"])
			  slack = 4 * (N - 1); if (slack < rhs / 100) slack = rhs / 100
			  bal = (d <= slack && rate > p / 2 && rate < 1.5 * p)
			  printf "%d %d naks=%s retransmits=%s duplicates=%s pulls=%s mcast_drops=%s lhs=%d rhs=%d rate=%.3f",
				steady, bal, e["naks"], e["retransmits"], e["duplicates"], e["pulls"], e["mcast_drops"], lhs, rhs, rate }')
		set -- $res
		[ "$1" = 1 ]; ok $? "N=$N drop=$p: recovered by NAK and retransmission, pulls the exception ($3 $4 $6)"
		[ "$2" = 1 ]; ok $? "N=$N drop=$p: counters balance the injected drops ($5 $7 $8 $9 ${10})"
	done
done
