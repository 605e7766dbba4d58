#!/bin/sh
# HCMA caches on the way up (thesis ch. 3, "after populating the local
# cache"): in a chain of node agents (launcher -> a -> b -> c, --degree 1) the
# rank on c puts a key, every rank fences, and the rank on b gets it. With
# hcma the middle agent b answers from its own cache (1 hit, 0 misses):
# the key passed through it inside the fence's aggregate. hcs is the
# reference (the put itself travels up through b).
. "$(dirname "$0")/lib.sh"
command -v bash >/dev/null || skip_all "bash not found"

cat > "$TMP/kv.sh" <<'EOS'
#!/bin/bash
r=$PMI_RANK fd=$PMI_FD
step() { # step <line to send> <regex the reply must match>
	printf '%s\n' "$1" >&$fd
	IFS= read -r reply <&$fd || { echo "rank $r: no reply to '$1'" >&2; exit 1; }
	[[ $reply =~ $2 ]] || { echo "rank $r: '$1' -> '$reply' (want /$2/)" >&2; exit 1; }
}
step "cmd=init pmi_version=1 pmi_subversion=1" '^cmd=response_to_init .*rc=0'
step "cmd=get_my_kvsname" '^cmd=my_kvsname .*kvsname=([^ ]+)'
kvs=${BASH_REMATCH[1]}
[ "$r" = 2 ] && step "cmd=put kvsname=$kvs key=deep value=from-c" '^cmd=put_result rc=0'
step "cmd=barrier_in" '^cmd=barrier_out'
[ "$r" = 1 ] && step "cmd=get kvsname=$kvs key=deep" '^cmd=get_result rc=0 .*value=from-c$'
step "cmd=barrier_in" '^cmd=barrier_out'
step "cmd=finalize" '^cmd=finalize_ack'
EOS
chmod +x "$TMP/kv.sh"

for cache in hcma hcs; do
	"$LAUNCH" -n 3 --hosts a,b,c --rsh local --degree 1 --cache $cache --timeout 20 \
		--stats-csv "$TMP/$cache.csv" -- "$TMP/kv.sh" >"$TMP/out" 2>"$TMP/err"
	is "$?" 0 "$cache: rank on c puts, rank on b gets after the fence"
	[ -s "$TMP/err" ] && diag "$(cat "$TMP/err")"
	# the agent of host b, between a and c: hits and misses of its cache
	hm=$(awk -F, -v h="$(head -1 "$TMP/$cache.csv")" 'BEGIN { n = split(h, c, ",");
		for (i = 1; i <= n; i++) col[c[i]] = i }
		NR > 1 && $col["host"] == "b" { print $col["hits"] "/" $col["misses"] }' "$TMP/$cache.csv")
	is "$hm" "1/0" "$cache: b's agent answers the get from its own cache (hits/misses)"
done
done_testing
