#!/bin/sh
# PMI-1 wire protocol served on PMI_FD: scripted client conversations, the
# good path (tree and flat, every cache policy) and malformed or
# out-of-order input (error reply, logged with the rank, job aborted).
. "$(dirname "$0")/lib.sh"
command -v bash >/dev/null || skip_all "bash not found"

cat > "$TMP/good.sh" <<'EOS'
#!/bin/bash
# one rank's side of a whole PMI-1 conversation
r=$PMI_RANK n=$PMI_SIZE fd=$PMI_FD
step() { # step <line to send> <regex the reply must match>
	printf '%s\n' "$1" >&$fd
	IFS= read -r reply <&$fd || { echo "rank $r: no reply to '$1'" >&2; exit 1; }
	[[ $reply =~ $2 ]] || { echo "rank $r: '$1' -> '$reply' (want /$2/)" >&2; exit 1; }
}
step "cmd=init pmi_version=1 pmi_subversion=1" '^cmd=response_to_init .*pmi_version=1.*rc=0'
step "cmd=get_maxes" '^cmd=maxes .*kvsname_max=[0-9]+ keylen_max=[0-9]+ vallen_max=[0-9]+'
step "cmd=get_appnum" '^cmd=appnum .*appnum=0'
step "cmd=get_my_kvsname" '^cmd=my_kvsname .*kvsname=([^ ]+)'
kvs=${BASH_REMATCH[1]}
step "cmd=get_universe_size" "^cmd=universe_size .*size=$n\$"
step "cmd=put kvsname=$kvs key=key$r value=val-$r-x" '^cmd=put_result rc=0'
step "cmd=barrier_in" '^cmd=barrier_out'
for ((i = 0; i < n; i++)); do
	p=$(( (r + i) % n ))
	step "cmd=get kvsname=$kvs key=key$p" "^cmd=get_result rc=0 .*value=val-$p-x\$"
done
step "cmd=get kvsname=$kvs key=no-such-key" '^cmd=get_result rc=-1'
step "cmd=get kvsname=$kvs key=PMI_process_mapping" '^cmd=get_result rc=0 .*value=\(vector,\(0,'
step "cmd=barrier_in" '^cmd=barrier_out'
step "cmd=finalize" '^cmd=finalize_ack'
echo "rank $r done"
EOS

cat > "$TMP/bad.sh" <<'EOS'
#!/bin/bash
# rank 0 (or 1 for abort) misbehaves; the others wait to be killed
r=$PMI_RANK fd=$PMI_FD what=$1
say() { printf '%s\n' "$1" >&$fd; }
get() { IFS= read -r reply <&$fd; printf '%s\n' "$reply" > "$REPLY_DIR/reply.$r.tmp"; mv "$REPLY_DIR/reply.$r.tmp" "$REPLY_DIR/reply.$r"; }
init() { say "cmd=init pmi_version=1 pmi_subversion=1"; IFS= read -r reply <&$fd; }
trap '' TERM  # keep the reply file consistent; SIGKILL follows
bad=0
[ "$what" = abort ] && bad=1
if [ "$r" != "$bad" ]; then
	init
	[ "$what" = mismatch ] && say "cmd=ibc_coll op=barrier root=0 bytes=0"
	exec sleep 30
fi
case $what in
garbage) init; say "this is not pmi"; get ;;
before_init) say "cmd=get_maxes"; get ;;
unknown) init; say "cmd=frobnicate x=1"; get ;;
spawn) init; say "mcmd=spawn"; get ;;
longline) init; printf 'cmd=put key=%05000d\n' 0 >&$fd; get ;;
after_finalize) init; say "cmd=finalize"; get; say "cmd=get_maxes"; get ;;
bad_put) init; say "cmd=put kvsname=x value=1"; get ;;
init_twice) init; say "cmd=init pmi_version=1 pmi_subversion=1"; get ;;
abort) init; say "cmd=abort exitcode=7 msg=scripted abort"; ;;
mismatch) init; say "cmd=ibc_coll op=allgather root=0 bytes=0"; get ;;
no_finalize) init; exit 0 ;;
esac
exec sleep 30
EOS
chmod +x "$TMP/good.sh" "$TMP/bad.sh"

"$LAUNCH" -n 1 --timeout 20 -- "$TMP/good.sh" >"$TMP/out" 2>"$TMP/err"
is "$?" 0 "one rank: whole conversation"
[ -s "$TMP/err" ] && diag "$(cat "$TMP/err")"
for mode in tree flat; do
	for cache in hcs hcma hcmab hcmab-lru; do
		"$LAUNCH" -n 6 --hosts a,b,c --rsh local --mode $mode --cache $cache --timeout 20 -- "$TMP/good.sh" \
			>"$TMP/out" 2>"$TMP/err"
		is "$?" 0 "6 ranks on 3 hosts, $mode, $cache: whole conversation"
		is "$(grep -c done "$TMP/out")" 6 "$mode $cache: every rank finished"
		[ -s "$TMP/err" ] && diag "$(cat "$TMP/err")"
	done
done

export REPLY_DIR=$TMP
# bad <case> <regex of the reply to rank 0> <regex of stderr> [status]
bad() {
	rm -f "$TMP"/reply.*
	t0=$(now)
	"$LAUNCH" -n 3 --hosts a,b --rsh local --timeout 20 -- "$TMP/bad.sh" "$1" "$MARK" >"$TMP/out" 2>"$TMP/err"
	st=$?
	is "$st" "${4:-1}" "$1: exit status ${4:-1}"
	ok "$(elapsed_lt "$t0" 8; echo $?)" "$1: job aborted quickly"
	if [ -n "$2" ]; then
		like "$(cat "$TMP/reply.0" 2>/dev/null)" "$2" "$1: error reply"
	fi
	like "$(cat "$TMP/err")" "$3" "$1: logged with the rank"
	sleep 0.2
	is "$(leftovers)$(agents_left)" 00 "$1: nothing left running"
}
bad garbage 'rc=-1' 'rank 0 on a: PMI protocol error: malformed_command'
bad before_init '^cmd=get_maxes_result rc=-1' 'rank 0 on a: PMI protocol error: command_before_init'
bad unknown '^cmd=frobnicate_result rc=-1' 'rank 0 on a: PMI protocol error: unknown_command'
bad spawn 'rc=-1' 'rank 0 on a: PMI protocol error: spawn_not_supported'
bad longline 'rc=-1' 'rank 0 on a: PMI protocol error: line_too_long'
bad after_finalize '^cmd=get_maxes_result rc=-1' 'rank 0 on a: PMI protocol error: command_after_finalize'
bad bad_put '^cmd=put_result rc=-1' 'rank 0 on a: PMI protocol error: bad_put'
bad init_twice 'rc=-1' 'rank 0 on a: PMI protocol error: init_twice'
bad abort '' 'rank 1 on a called abort \(exit code 7\): scripted abort' 7
bad mismatch '' 'collective mismatch'
bad no_finalize '' 'rank 0 on a exited without PMI finalize'
done_testing
