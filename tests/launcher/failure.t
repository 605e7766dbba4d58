#!/bin/sh
# Process health: a failing rank ends the job quickly with its status, a
# signal to the launcher does the same, --timeout, no process left behind.
. "$(dirname "$0")/lib.sh"

# run_fail <label> <expected status> <regex of the last stderr line> <launcher args...>
run_fail() {
	label=$1; want=$2; re=$3; shift 3
	t0=$(now)
	"$LAUNCH" --timeout 20 "$@" 2>"$TMP/err" >"$TMP/out"
	st=$?
	is "$st" "$want" "$label: exit status $want"
	ok "$(elapsed_lt "$t0" 8; echo $?)" "$label: job ended quickly"
	like "$(tail -n 1 "$TMP/err")" "$re" "$label: last stderr line says who failed how"
	sleep 0.3
	is "$(leftovers)" 0 "$label: no process of the job left"
	is "$(agents_left)" 0 "$label: no launcher or node agent left"
}

prog_exit='if [ "$PMI_RANK" = 5 ]; then sleep 0.3; exit 3; fi; exec sleep 30'
prog_kill='if [ "$PMI_RANK" = 6 ]; then sleep 0.3; kill -9 $$; fi; sleep 30; : '

cases() { # cases <rsh> <hosts> <label>
	rsh=$1; hosts=$2; tag=$3
	for mode in tree flat; do
		run_fail "$tag $mode rank exits 3" 3 "rank 5 on [a-z0-9-]+ exited with status 3" \
			-n 8 --hosts "$hosts" --rsh "$rsh" --mode $mode -- sh -c "$prog_exit" "$MARK"
		run_fail "$tag $mode rank SIGKILL" 137 "rank 6 on [a-z0-9-]+ was killed by signal 9" \
			-n 8 --hosts "$hosts" --rsh "$rsh" --mode $mode -- sh -c "$prog_kill" "$MARK"
	done
	# SIGTERM to the launcher
	t0=$(now)
	"$LAUNCH" -n 8 --hosts "$hosts" --rsh "$rsh" -- sh -c 'sleep 30; :' "$MARK" 2>"$TMP/err" &
	pid=$!
	sleep 0.7
	kill -TERM $pid
	wait $pid
	is "$?" 143 "$tag: SIGTERM to the launcher: exit 143"
	ok "$(elapsed_lt "$t0" 8; echo $?)" "$tag: SIGTERM: job ended quickly"
	like "$(tail -n 1 "$TMP/err")" "signal 15" "$tag: SIGTERM: last line names the signal"
	sleep 0.3
	is "$(leftovers)" 0 "$tag: SIGTERM: no process left"
	is "$(agents_left)" 0 "$tag: SIGTERM: no node agent left"
	run_fail "$tag timeout" 124 "timed out after 1 s" --timeout 1 -n 4 --hosts "$hosts" --rsh "$rsh" \
		-- sh -c 'sleep 30; :' "$MARK"
}

cases local fake1,fake2,fake3,fake4 "local"
why=$(netns_why)
if [ -n "$why" ]; then
	skip "network namespaces: $why"
elif hosts_up 4; then
	cases 'ip netns exec {host}' ibc-h1,ibc-h2,ibc-h3,ibc-h4 "netns"
else
	ok 1 "scripts/testhosts up 4"
fi
done_testing
