#!/bin/sh
# The shm conformance suite at 64 ranks: each process then has 73 receive
# rings (64 peers, the shared queue, 8 groups), more than one 64-bit word of
# the transport's active-ring set, so a receive poll that finds completions
# only through that set (the shared queue and the groups are in its second
# word) is checked on every operation of the suite.
. "$(dirname "$0")/../lib/tap.sh"
T=$BUILD/tests/xport/conformance.t
tap_need "$T"
tap_tmp many
echo "1..2"
IBC_TEST_XPORT=shm IBC_TEST_RANKS=64 timeout 300 "$T" >"$tmp/out" 2>"$tmp/err"; rc=$?
ok $rc "conformance at 64 ranks on shm exits 0 (got $rc)"
[ $rc -eq 0 ] || { grep '^not ok' "$tmp/out" | head -10 | sed 's/^/# /'; tail -5 "$tmp/err" | sed 's/^/# /'; }
grep -q '^# --- 64 ranks on shm' "$tmp/out" && ! grep -q '^not ok' "$tmp/out" &&
	[ "$(grep -c '^ok' "$tmp/out")" -ge 200 ]
ok $? "... it ran at 64 ranks, $(grep -c '^ok' "$tmp/out") checks, none failed"
