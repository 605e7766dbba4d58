#!/bin/sh
# tests/launcher/deadline.t - ibchar-launch --timeout names who did not
# answer: rank 1 never joins the PMI collective the others wait in; at the
# deadline the job ends with 124, the node agent names rank 1 and its host,
# and no process of the job is left.
. "$(dirname "$0")/../lib/tap.sh"
LAUNCH=$BUILD/bin/ibchar-launch
PROBE=$BUILD/bin/ibchar-launch-probe
tap_need "$LAUNCH" "$PROBE"
tap_tmp ldeadline
echo "1..3"

# shellcheck disable=SC2016 # PMI_RANK is the rank's
timeout 60 "$LAUNCH" -n 3 --timeout 2 -- sh -c 'if [ "$PMI_RANK" = 1 ]; then exec sleep 97; fi
	exec "$0" "$1" pmi allgather 4' "$PROBE" "$tmp/stamps" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 124 ]; ok $? "a rank that never joins: the job ends at --timeout (exit $rc)"
grep -q "rank 1 on [^ ]* never joined collective 0 (2 ranks had)" "$tmp/err" &&
	grep -q "the job timed out after 2 s" "$tmp/err"
ok $? "... the node agent names the rank that did not answer, the launcher the deadline"
[ $rc -eq 124 ] || sed 's/^/# /' "$tmp/err"
sleep 0.5
left=$(pgrep -f -- "$tmp/stamps|sleep 97" | wc -l)
[ "$left" -eq 0 ]; ok $? "... no process left ($left)"
