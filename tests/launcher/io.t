#!/bin/sh
# Output forwarding (line-wise, --tag-output, stderr), stdin to rank 0 only,
# the environment of every process, -x exports.
. "$(dirname "$0")/lib.sh"

for mode in tree flat; do
	out=$(printf 'in1\nin2\n' | "$LAUNCH" -n 4 --hosts a,b --rsh local --mode $mode --tag-output --timeout 20 \
		-- sh -c 'cat; echo end' | sort | tr '\n' ' ')
	is "$out" "[0] end [0] in1 [0] in2 [1] end [2] end [3] end " "$mode: stdin reaches rank 0 only, output tagged"
	err=$("$LAUNCH" -n 2 --rsh local --mode $mode --timeout 20 -- sh -c 'echo to-err >&2' 2>&1 >/dev/null | sort | tr '\n' ' ')
	is "$err" "to-err to-err " "$mode: stderr forwarded to stderr"
	out=$("$LAUNCH" -n 1 --rsh local --mode $mode --timeout 20 -- sh -c 'printf "no newline"')
	is "$out" "no newline" "$mode: a last line without newline is forwarded"
	out=$("$LAUNCH" -n 6 --hosts a,b,c --rsh local --mode $mode --timeout 20 -- \
		sh -c 'echo $PMI_RANK/$PMI_SIZE:$IBC_LAUNCH_LOCAL_RANK/$IBC_LAUNCH_LOCAL_SIZE:$IBC_LAUNCH_NODE/$IBC_LAUNCH_NNODES:$IBC_LAUNCH_HOST' \
		| sort | tr '\n' ' ')
	is "$out" "0/6:0/2:0/3:a 1/6:1/2:0/3:a 2/6:0/2:1/3:b 3/6:1/2:1/3:b 4/6:0/2:2/3:c 5/6:1/2:2/3:c " \
		"$mode: rank, size, local rank/size, node index and host in the environment"
	out=$(IBC_T_VAR=from-here "$LAUNCH" -n 2 --rsh local --mode $mode -x IBC_T_VAR -x IBC_T2=set --timeout 20 -- \
		sh -c 'echo $IBC_T_VAR $IBC_T2' | sort -u)
	is "$out" "from-here set" "$mode: -x VAR and -x VAR=VAL exported"
done
"$LAUNCH" -n 6 --hosts a,b,c --rsh local --degree 2 --stats -- true 2>"$TMP/err"
is "$?" 0 "--stats run"
like "$(head -2 "$TMP/err" | tr '\n' ' ')" "counters \(mode tree, cache hcs\) agent +host +msgs_sent" "--stats prints a header"
is "$(grep -cE '^[0-3] +(launcher|a|b|c) +[0-9]+' "$TMP/err")" 4 "--stats prints one row per agent (launcher + 3 NLAs)"
big=$("$LAUNCH" -n 1 --rsh local -- sh -c 'head -c 200000 /dev/zero | tr "\0" x; echo' | tr -d '\n' | wc -c | tr -d ' ')
is "$big" 200000 "a 200 KB line arrives whole (in chunks)"
done_testing
