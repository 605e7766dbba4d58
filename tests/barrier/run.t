#!/bin/sh
# `ibchar run barrier`: every variant at N = 2 and 3 in one run, validated,
# the variant x N summary on stdout; under ibchar-launch (--launcher tree)
# too, with the node sync as the harness's sync step; bad parameters exit 2
# with a message.  Each algorithm's row is over --instances barriers called in
# turn (8 by default, RGM one), and says how many ran.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$BUILD/bin/ibchar" "$BUILD/bin/ibchar-barrier"
tap_tmp brun
echo "1..19"

timeout 50 "$IBCHAR" run barrier --ranks 2,3 --iters 200 --xport shm --out "$tmp/r" --validate \
	>"$tmp/sum" 2>"$tmp/err"; rc=$?
ok $rc "ibchar run barrier --ranks 2,3 --validate exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -20
variants=$("$BUILD/bin/ibchar-barrier" --list | tr '\n' ' ')
for N in 2 3; do
	missing=
	for v in $variants; do
		c=$(awk -F, -v v="$v" -v N="$N" 'NR > 1 && $2 == "barrier" && $3 == v && $9 == N && $15 + 0 > 0 && $NF ~ /valid=1/ { c++ } END { print c + 0 }' "$tmp/r/results.csv" 2>/dev/null)
		[ "$c" -ge 1 ] || missing="$missing $v"
	done
	[ -z "$missing" ]; ok $? "N=$N: a valid row for every variant ($variants)${missing:+ missing:$missing}"
done
# RGM's fan-ins 1, 3, 7, 15: at N = 3, 1 and 3 (flat); 7 and 15 would be the same flat tree
f=$(awk -F, 'NR > 1 && $3 == "rgm" && $9 == 3 { print $11 }' "$tmp/r/results.csv" 2>/dev/null | sort -n | tr '\n' ' ')
[ "$f" = "1 3 " ]; ok $? "N=3: rgm at fan-ins 1 and 3 (the flat gather), not 7 or 15 (got: $f)"
ids=$(awk -F, 'NR > 1 { print $1 }' "$tmp/r/results.csv" 2>/dev/null | sort -u | wc -l)
[ "$ids" -eq 1 ]; ok $? "all rows under one run id"
grep -q 'by variant x ranks' "$tmp/sum" && grep -Eq '^rds +ibchar .* [0-9.]+[*?]* +[0-9.]+[*?]*$' "$tmp/sum"
ok $? "the summary pivots variant x N with a median per N"

# the rows say how many instances ran: every one of --instances, RGM's one,
# none for a variant that is not an algorithm of the table
bad=$(awk -F, 'NR > 1 && $4 == "ibchar" { k = ($NF ~ /;instances=8(;|$)/) ? 8 : ($NF ~ /;instances=1(;|$)/) ? 1 : 0;
	if (k != ($3 == "rgm" ? 1 : 8)) print $3 "/" $9 }' "$tmp/r/results.csv" 2>/dev/null | tr '\n' ' ')
[ -s "$tmp/r/results.csv" ] && [ -z "$bad" ]; ok $? "by default every algorithm's row ran 8 instances, RGM's 1${bad:+ (not: $bad)}"
timeout 30 "$BUILD/bin/ibchar-barrier" --ranks 3 --variants rds,pe --instances 3 --iters 20 --warmup 1 \
	--xport shm --validate --quiet --out "$tmp/k3" >/dev/null 2>"$tmp/ek3"; rc=$?
c=$(awk -F, 'NR > 1 && $NF ~ /valid=1/ && $NF ~ /;instances=3(;|$)/ { c++ } END { print c + 0 }' "$tmp/k3/results.csv" 2>/dev/null)
[ $rc -eq 0 ] && [ "$c" -eq 2 ]; ok $? "--instances 3 at N = 3: rds and pe valid over the three, each of which ran (rc $rc, rows $c)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/ek3" | tail -5
"$BUILD/bin/ibchar-barrier" --ranks 2 --instances 0 --out "$tmp/k0" >/dev/null 2>"$tmp/ek0"; rc=$?
[ $rc -eq 2 ] && grep -q 'instances' "$tmp/ek0"; ok $? "--instances 0 exits 2 with a message (got $rc)"
"$BUILD/bin/ibchar-barrier" --ranks 2 --instances 65 --out "$tmp/k65" >/dev/null 2>"$tmp/ek65"; rc=$?
[ $rc -eq 2 ] && grep -q 'instances' "$tmp/ek65"; ok $? "--instances 65 exits 2 with a message (got $rc)"

"$IBCHAR" run barrier --ranks 2 --fanin 4 --iters 10 --out "$tmp/bad1" >/dev/null 2>"$tmp/e1"; rc=$?
[ $rc -eq 2 ]; ok $? "--fanin 4 exits 2 (got $rc)"
grep -Eqi 'fan-?in.*(2\^k|2\^k ?- ?1|1, 3, 7)' "$tmp/e1"; ok $? "... with a message on the fan-in rule"
[ $rc -eq 2 ] || sed 's/^/# /' "$tmp/e1" | tail -5

"$IBCHAR" run barrier --ranks 0 --iters 10 --out "$tmp/bad2" >/dev/null 2>"$tmp/e2"; rc=$?
[ $rc -eq 2 ]; ok $? "--ranks 0 exits 2 (got $rc)"
[ -s "$tmp/e2" ] && grep -qi 'rank' "$tmp/e2"; ok $? "... with a message about the rank count"
[ $rc -eq 2 ] || sed 's/^/# /' "$tmp/e2" | tail -5

"$IBCHAR" run barrier --ranks 2 --variants nosuch --iters 10 --out "$tmp/bad3" >/dev/null 2>"$tmp/e3"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown variant 'nosuch'" "$tmp/e3"; ok $? "an unknown variant exits 2 with a message (got $rc)"

timeout 60 "$IBCHAR" run barrier --launcher tree --ranks 3 --iters 200 --xport shm --out "$tmp/t" --validate \
	>/dev/null 2>"$tmp/et"; rc=$?
ok $rc "ibchar run barrier --launcher tree --ranks 3 --validate exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/et" | tail -10
c=$(awk -F, 'NR > 1 && $6 == "tree" && $9 == 3 && $15 + 0 > 0 && $NF ~ /valid=1/ && !seen[$3]++ { c++ } END { print c + 0 }' "$tmp/t/results.csv" 2>/dev/null)
[ "$c" -eq "$(echo $variants | wc -w)" ]; ok $? "... a valid tree row for every variant ($c)"
grep -qx 'sync,node-shm-barrier' "$tmp/t/meta.csv"; ok $? "... synchronised by the node sync, not a round trip through the node agent"
# 3 ranks on 2 PUs: oversubscribed, and pinned round robin all the same
if [ "$(nproc)" -lt 3 ]; then
	grep -qx 'oversubscribed,1' "$tmp/t/meta.csv" &&
		grep -qx 'pinning,local rank r on PU r mod PUs (hwloc; oversubscribed)' "$tmp/t/meta.csv"
	ok $? "... oversubscribed (3 ranks, $(nproc) PUs) and pinned round robin ($(grep '^pinning' "$tmp/t/meta.csv"))"
else
	n=$((n + 1)); echo "ok $n # SKIP $(nproc) PUs: 3 ranks are not oversubscribed"
fi
