#!/bin/sh
# The launcher's default remote shell, real ssh: `scripts/testhosts ssh` puts
# an sshd in every test host; ibchar-launch without --rsh reaches them with
# BatchMode ssh, in tree mode (a chain, so node agents start agents over ssh
# too) and in flat mode; MPICH runs over it; a failing rank and an ssh that
# cannot connect end the job with the right status and leave nothing behind.
. "$(dirname "$0")/lib.sh"
why=$(netns_why)
[ -z "$why" ] || skip_all "$why"
[ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1 ||
	skip_all "openssh-server or openssh-client missing (scripts/install-deps.sh installs them)"
hosts_up 4 || skip_all "scripts/testhosts up 4 failed"
TH=$SRC/scripts/testhosts
H=ibc-h1,ibc-h2,ibc-h3,ibc-h4

"$TH" ssh; is "$?" 0 "testhosts ssh"
"$TH" ssh; is "$?" 0 "testhosts ssh again (idempotent)"
alive=0
for i in 1 2 3 4; do
	kill -0 "$(cat /run/ibchar/ssh/sshd-ibc-h$i.pid 2>/dev/null)" 2>/dev/null && alive=$((alive + 1))
done
is "$alive" 4 "an sshd in every host"
like "$(ssh -o BatchMode=yes ibc-h2 'ip -4 -o addr show dev eth0' 2>&1)" "10\.77\.0\.2/" \
	"ssh ibc-h2 runs in ibc-h2"

# where every rank ran: "rank address" lines
where='echo "$IBC_LAUNCH_RANK $(ip -4 -o addr show dev eth0 | grep -o "10\.77\.0\.[0-9]*")"'
want="0 10.77.0.1 1 10.77.0.1 2 10.77.0.2 3 10.77.0.2 4 10.77.0.3 5 10.77.0.3 6 10.77.0.4 7 10.77.0.4"
for mode in "--degree 1" "--mode flat"; do
	out=$("$LAUNCH" --timeout 60 -n 8 --hosts $H $mode -- sh -c "$where" 2>"$TMP/err" | sort -n | tr '\n' ' ')
	is "${out% }" "$want" "ssh, $mode: 8 ranks, 2 per host, each in its host"
	[ -s "$TMP/err" ] && diag "$(head -3 "$TMP/err")"
done

HELLO=$IBC_BUILD/tests/launcher/hello-mpich
if [ -x "$HELLO" ]; then
	n=$("$LAUNCH" --timeout 60 -n 8 --hosts $H -- "$HELLO" 2>"$TMP/err" | grep -c 'allreduce ok, ring ok')
	is "$n" 8 "ssh: MPICH hello over PMI-1, 8 ranks on 4 hosts"
else
	skip "MPICH hello not built"
fi

"$LAUNCH" --timeout 60 -n 8 --hosts $H -- sh -c "[ \$IBC_LAUNCH_RANK = 5 ] && exit 3; sleep 30 # $MARK" \
	2>"$TMP/err"
is "$?" 3 "ssh: rank 5 exits 3 -> the launcher exits 3"
like "$(tail -1 "$TMP/err")" "rank 5 on ibc-h3 exited with status 3" "... and says which rank on which host"

# an sshd that is gone: the remote shell fails, the job ends at once
kill "$(cat /run/ibchar/ssh/sshd-ibc-h4.pid)"
t0=$(now)
"$LAUNCH" --timeout 60 -n 4 --hosts $H -- sleep 30 2>"$TMP/err"
rc=$?
ok "$([ $rc -ne 0 ] && elapsed_lt "$t0" 20; echo $?)" "ssh: no sshd on ibc-h4 -> non-zero exit ($rc) well before the timeout"
like "$(tail -1 "$TMP/err")" "could not start the node agent on ibc-h4" "... naming the host"
"$TH" ssh >/dev/null

sleep 1
is "$(leftovers)" 0 "no process of the test left"
is "$(agents_left)" 0 "no node agent left"
is "$(pgrep -c -f '^sshd: root' 2>/dev/null || true)" 0 "no ssh session left"
done_testing
