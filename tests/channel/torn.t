#!/bin/sh
# The channel test (tests/channel/channel.c) on shm with IBCHAR_SHM_TORN=1:
# every write stored a byte at a time, lowest address first, as Soft-RoCE
# places it, so the peer's head and tail pointers are read half written now
# and then.  Every design must still deliver every byte, and the mutant of
# basic that trusts one read of a pointer must be caught.
. "$(dirname "$0")/../lib/tap.sh"
T=$BUILD/tests/channel/channel.t
tap_need "$T"
tap_tmp torn
echo "1..2"
IBC_TEST_XPORT=shm IBCHAR_SHM_TORN=1 IBC_TEST_CHANNEL_BYTES=262144 timeout 300 "$T" \
	>"$tmp/out" 2>"$tmp/err"; rc=$?
ok $rc "the channel test with torn stores exits 0 (got $rc)"
[ $rc -eq 0 ] || { grep '^not ok' "$tmp/out" | head -10 | sed 's/^/# /'; tail -5 "$tmp/err" | sed 's/^/# /'; }
grep -q '^ok .* - mutant: basic trusting one read' "$tmp/out" && ! grep -q '^not ok' "$tmp/out"
ok $? "... $(grep -c '^ok' "$tmp/out") checks passed, the one-read mutant among them"
