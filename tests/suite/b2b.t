#!/bin/sh
# The back-to-back loop (paper_us, b2b_p50_us) is part of its point and
# within its budget: when the budget cuts the timed run short of its plan,
# the loop runs no more operations than the timed run did (a 1 MiB
# ping-pong on Soft-RoCE under TCG took minutes for the fixed 1000, past the
# runner's deadline); when it does not, the loop runs its 1000 whatever
# --iters says.  The row says how many it ran (b2b_n), and how many the
# clock timed at a time (b2b_block: n / 16, at least 1 and at most 16; the
# median is over those blocks).  What is asserted is what the driver
# decided, not how fast the machine was.
. "$(dirname "$0")/../lib/tap.sh"
BIN=$BUILD/bin/ibchar-link
tap_need "$BIN"
tap_tmp b2b
echo "1..6"

# $1 = a run's directory: "timed b2b_n b2b_block", the timed iterations of
# its point (its progress line; the row's iters are the samples kept), the
# row's back-to-back count and its block
iters_n() {
	sed -n 's/.* bytes, \([0-9]*\) iters,.*/\1/p' "$1.out" | head -1
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["variant"] == "write-lat" {
			n = $c["extra"]; sub(/.*b2b_n=/, "", n); sub(/;.*/, "", n)
			k = $c["extra"]; if (!sub(/.*b2b_block=/, "", k)) k = "none"; sub(/;.*/, "", k)
			print n, k }' "$1/results.csv"
}

# 5000 planned 1 MiB round trips cannot fit 0.05 s: the budget cuts them
"$BIN" --ranks 2 --xport shm --sizes 1M --variants write-lat --iters 5000 --budget 0.05 \
	--out "$tmp/cut" >"$tmp/cut.out" 2>&1
ok $? "a 1 MiB point under a 0.05 s budget runs"
set -- $(iters_n "$tmp/cut")
want=$(($1 < 1000 ? $1 : 1000))
[ "$1" -lt 5000 ] && [ "$2" = "$want" ]
ok $? "the budget cut the timed run to $1 of 5000: the back-to-back loop ran $2 (min of that and 1000: $want)"
blk=$(($2 / 16 < 1 ? 1 : $2 / 16 > 16 ? 16 : $2 / 16))
[ "$3" = "$blk" ]
ok $? "its $2 operations were timed $3 at a time (n / 16 within 1..16: $blk)"

# 50 planned 8 B round trips fit the 10 s budget: the loop runs its 1000
"$BIN" --ranks 2 --xport shm --sizes 8 --variants write-lat --iters 50 --budget 10 \
	--out "$tmp/full" >"$tmp/full.out" 2>&1
ok $? "an 8 B point of 50 iterations runs"
set -- $(iters_n "$tmp/full")
[ "$1" = 50 ] && [ "$2" = 1000 ]
ok $? "not cut by the budget ($1 iterations): the back-to-back loop ran its 1000 ($2)"
[ "$3" = 16 ]
ok $? "its 1000 operations were timed 16 at a time ($3), a median over 63 blocks"
