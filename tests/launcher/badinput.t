#!/bin/sh
# Bad input: a clear message naming the problem, non-zero exit, nothing left.
. "$(dirname "$0")/lib.sh"

# A hosts file of our own: names resolve to this machine, so a template
# remote shell runs everything here (no root needed).
printf '127.0.0.1 fakehost1 fakehost2\n' > "$TMP/hosts"
export IBC_HOSTS_FILE="$TMP/hosts"

# bad <label> <want status: number or "nonzero"> <regex on stderr> <args...>
bad() {
	label=$1; want=$2; re=$3; shift 3
	"$LAUNCH" --timeout 20 "$@" >"$TMP/out" 2>"$TMP/err"
	st=$?
	if [ "$want" = nonzero ]; then
		ok "$([ "$st" != 0 ]; echo $?)" "$label: non-zero exit ($st)"
	else
		is "$st" "$want" "$label: exit status $want"
	fi
	like "$(cat "$TMP/err")" "$re" "$label: message names the problem"
	sleep 0.2
	is "$(leftovers)$(agents_left)" 00 "$label: nothing left running"
}

T='env IBC_TEST_HOST={host}'
"$LAUNCH" -n 2 --hosts fakehost1,fakehost2 --rsh "$T" -- sh -c "exit 0" "$MARK"
is "$?" 0 "template remote shell with resolvable test hosts works"
bad "unknown host" 2 "unknown host 'nosuchhost'" -n 2 --hosts fakehost1,nosuchhost --rsh "$T" -- true
bad "failing remote shell" nonzero "could not start the node agent on fakehost1" \
	-n 2 --hosts fakehost1,fakehost2 --rsh 'false {host}' -- true
bad "remote shell not found" nonzero "node agent on fakehost1" \
	-n 2 --hosts fakehost1,fakehost2 --rsh '/no/such/rsh {host}' -- true
bad "missing program (tree)" 127 "cannot execute '/no/such/program': No such file" \
	-n 3 --hosts a,b --rsh local -- /no/such/program "$MARK"
bad "missing program (flat)" 127 "cannot execute '/no/such/program'" \
	-n 3 --hosts a,b --rsh local --mode flat -- /no/such/program "$MARK"
printf 'data\n' > "$TMP/notexec"; chmod 644 "$TMP/notexec"
bad "program not executable" 127 "cannot execute '$TMP/notexec': Permission denied" \
	-n 2 -- "$TMP/notexec"
bad "NP larger than the slots" 2 "5 processes asked but the hosts give only 4 slots" \
	-n 5 --hosts a:2,b:2 --rsh local -- true
bad "NP larger than hosts x ppn" 2 "do not fit" -n 5 --hosts a,b --ppn 2 --rsh local -- true
printf 'a slots=2\nb slotz=2\n' > "$TMP/hf1"
bad "malformed hostfile" 2 "hostfile .*line 2: unexpected 'slotz=2'" --hostfile "$TMP/hf1" --rsh local -- true
printf 'a\nb@c\n' > "$TMP/hf2"
bad "bad host name in hostfile" 2 "line 2: bad host 'b@c'" --hostfile "$TMP/hf2" --rsh local -- true
bad "missing hostfile" nonzero "cannot read hostfile" --hostfile "$TMP/none" --rsh local -- true
bad "template without {host}" 2 "neither local, ssh nor a template" -n 2 --hosts a --rsh 'ip netns exec' -- true
bad "no program" 2 "no program given" -n 2
bad "unknown option" 2 "unknown option" --frobnicate -- true
bad "bad degree" 2 "degree" --degree zero -- true
# a hostfile with slots drives the placement
printf '# two hosts\na slots=1\nb:3\n' > "$TMP/hf3"
out=$("$LAUNCH" --hostfile "$TMP/hf3" --rsh local -- sh -c 'echo $PMI_RANK@$IBC_LAUNCH_HOST' | sort | tr '\n' ' ')
is "$out" "0@a 1@b 2@b 3@b " "hostfile slots: NP defaults to the slots, blocks follow them"
done_testing
