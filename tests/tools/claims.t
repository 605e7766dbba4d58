#!/bin/sh
# ibchar claims DIR: the scorecard on synthetic results directories with
# known answers.  A claims file of the test's own (the rule vocabulary:
# subject/reference with their own conditions, select, factor and gap,
# better, better-growing, similar, a method condition) against rows made
# here: a claim reproduced is ok, one not reproduced is not ok (exit 1),
# one whose rows are all oversubscribed, one whose rows are missing, one with
# too few kept samples, a trend with too few points and a claim about two
# subjects of which one has no evidence are ok # SKIP with the reason;
# damaged or missing input exits 2 with one line.  The shipped claims
# (results/claims/) parse and are all judged.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR"
tap_tmp claims
here=$(cd "$(dirname "$0")" && pwd)
echo "1..25"

H='run_id,suite,variant,impl,xport,launcher,nodes,ppn,ranks,bytes,fanin,iters,warmup,min_us,p50_us,mean_us,p99_us,max_us,stdev_us,ci_lo_us,ci_hi_us,skew_us,wait,oversub,probe_us,extra'
# row VARIANT RANKS P50 [OVERSUB [ITERS [EXTRA [FANIN [BYTES]]]]]
row() {
	echo "R1,toy,$1,ibchar,shm,fork,1,$2,$2,${8:-0},${7:-},${5:-1000},100,$3,$3,$3,$3,$3,0,$3,$3,0,spin,${4:-0},0.1,${6:-sync=window}"
}
mkdir "$tmp/d"
{
	echo "$H"
	row fast 2 1.0
	row slow 2 2.0
	row fast 4 1.0 1
	row slow 4 3.0 1
	row only4a 4 1.0 1
	row only4b 4 2.0 1
	row fewa 2 1.0 0 10
	row fewb 2 2.0 0 10
	for k in 2 3 5; do row up "$k" "$k"; row base "$k" "$((3 * k))"; done
	for k in 2 3 5; do row down "$k" "$k"; row base3 "$k" "$((k + 10 / k))"; done
	row short 2 1.0; row short 3 1.0; row base2 2 2.0; row base2 3 2.0
	row twin 2 1.00; row twin2 2 1.05
	row half 4 0.5 1
	row barr 2 1.0 0 1000 'sync=barrier;paper_us=0.9'
	row barr2 2 2.0 0 1000 'sync=window;paper_us=1.9'
	row gath 2 1.0 0 1000 '' 7
	row gath 2 1.5 0 1000 '' 1
	row spare 2 1.0
	echo "R1,toy,fast,model,shm,fork,1,8,8,0,,,,,0.01,,,,,,,,spin,0,0.1,err_pct=1"
} >"$tmp/d/results.csv"
printf 'key,value\nbench,1\nrun_id,R1\nhost,testhost\npus,2\ndevice,shm\n' >"$tmp/d/meta.csv"

C='id,paper,section,claim,suite,subject,reference,select,metric,stat,expect,threshold,along,needs,paper_figure,testbed,paper_method,method,method_note'
claim() { # ID SUBJECT REFERENCE SELECT METRIC STAT EXPECT THRESHOLD ALONG NEEDS METHOD
	echo "$1,Toy et al. 2024,sec. 1,the claim $1,toy,$2,$3,$4,$5,$6,$7,$8,$9,${10},paper says 1.5x,a toy cluster,the paper's way,${11:-same},here's way"
}
{
	echo "$C"
	claim c-repro fast slow '' p50_us factor better
	claim c-notrepro slow fast '' p50_us factor better
	claim c-oversub only4a only4b '' p50_us factor better
	claim c-missing nosuch slow '' p50_us factor better
	claim c-few fewa fewb '' p50_us factor better
	claim c-trend up base '' p50_us gap better-growing '' ranks
	claim c-trend-short short base2 '' p50_us gap better-growing '' ranks
	claim c-trend-falls down base3 '' p50_us gap better-growing '' ranks
	claim c-both '"fast half"' slow '' p50_us factor better
	claim c-similar twin twin2 '' p50_us factor similar 1.1
	claim c-method barr barr2 '' paper_us factor better '' '' '' sync=barrier
	claim c-fanin 'gath[fanin=7]' 'gath[fanin=1]' '' p50_us factor better
	claim c-select fast slow 'ranks>=8' p50_us factor better
	claim c-mcast fast slow '' p50_us factor better '' '' hw-multicast
} >"$tmp/claims.csv"

"$IBCHAR" claims --claims "$tmp/claims.csv" "$tmp/d" >"$tmp/out" 2>"$tmp/err"; rc=$?
sed 's/^/# | /' "$tmp/out"
[ $rc -eq 1 ] && head -n 1 "$tmp/out" | grep -qx '1\.\.14'
ok $? "14 claims judged; two not reproduced: exit 1 (got $rc)"
line() { grep -E "^(not )?ok [0-9]+ - $1 " "$tmp/out"; }
line c-repro | grep -q '^ok .*: reproduced: fast/slow 2\.00x (1 comparison at N = 2) (paper: paper says 1\.5x)$'
ok $? "a claim reproduced: ok, this run's figure beside the paper's"
grep -A1 '^ok [0-9]* - c-repro ' "$tmp/out" | grep -q '^# not counted: 1 comparison with an oversubscribed row (N = 4 on 2 PUs)$'
ok $? "... and the oversubscribed N = 4 is said not to count"
line c-notrepro | grep -q '^not ok .*: not reproduced: slow/fast 0\.50x'
ok $? "a claim not reproduced: not ok"
line c-oversub | grep -q '# SKIP not measurable here: no comparison counts: 1 comparison with an oversubscribed row (N = 4 on 2 PUs)$'
ok $? "every row oversubscribed: not measurable here, ok # SKIP with the reason"
line c-missing | grep -q '# SKIP not measurable here: no rows of toy nosuch in this run$'
ok $? "rows missing: not measurable here"
line c-few | grep -q '# SKIP not measurable here: no comparison counts: 1 with a row of fewer than 30 kept samples$'
ok $? "fewer than 30 kept samples: not measurable here"
line c-trend | grep -q '^ok .*: reproduced: up/base +4 us to +10 us (3 comparisons at N = 2, 3, 5)'
ok $? "a gap growing along N at 3 points: reproduced"
line c-trend-short | grep -q '# SKIP not measurable here: a trend along ranks needs 3 points that count; short against base2 has 2 (ranks 2, 3)$'
ok $? "a trend with 2 points: not measurable here"
line c-trend-falls | grep -q '^not ok .*: not reproduced: down/base3 +2 us to +5 us' &&
	grep -A1 '^not ok [0-9]* - c-trend-falls ' "$tmp/out" | grep -q '^# down/base3 does not grow with ranks: +5 us at 2, +2 us at 5$'
ok $? "better at every N but the gap falls along N: not reproduced"
line c-both | grep -q '# SKIP not measurable here: no comparison of half with slow counts (the claim is about both)'
ok $? "two subjects, one without evidence: not measurable, never reproduced from the other alone"
line c-similar | grep -q '^ok .*: reproduced: twin/twin2 1\.05x'
ok $? "similar within 1.1x: reproduced"
grep -A2 '^ok [0-9]* - c-method ' "$tmp/out" | grep -q '^# method: differs at 1 of 1 comparisons (sync window there, not barrier)\. The paper: the paper.s way\. Here: here.s way$'
ok $? "a method condition the rows do not meet: the method is said to differ"
grep -A3 '^ok [0-9]* - c-repro ' "$tmp/out" | grep -q "^# method: as the paper's: the paper's way$"
ok $? "... and the paper's method where the claim says so"
line c-fanin | grep -q '^ok .*: reproduced: gath/gath 1\.50x'
ok $? "a side's own condition (fan-in 7 against fan-in 1 of one variant)"
line c-select | grep -q '# SKIP not measurable here: no fast rows with ranks>=8 (this run: ranks 2, 4)$'
ok $? "select: no rows at N >= 8, with the N this run has"
line c-mcast | grep -q '# SKIP not measurable here: needs hardware multicast (this run: transport shm, device shm)$'
ok $? "needs hardware multicast: not measurable on shm"
grep -q '^# 5 reproduced, 2 not reproduced, 7 not measurable here' "$tmp/out"
ok $? "the closing count"

# only claims that hold or cannot be measured: exit 0
grep -v -e '^c-notrepro,' -e '^c-trend-falls,' "$tmp/claims.csv" >"$tmp/good.csv"
"$IBCHAR" claims --claims "$tmp/good.csv" "$tmp/d" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ]; ok $? "nothing not reproduced: exit 0 (got $rc)"

# damaged or missing input: exit 2, one line
bad() { # NAME: DIR and CLAIMS as set, checks exit 2 and a one-line message
	"$IBCHAR" claims --claims "$2" "$1" >/dev/null 2>"$tmp/e"; r=$?
	[ $r -eq 2 ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] || { echo "# exit $r:"; sed 's/^/# /' "$tmp/e"; return 1; }
}
rc=0; mkdir "$tmp/empty" "$tmp/hdr" "$tmp/abc" "$tmp/nometa" "$tmp/xabc"
bad "$tmp/none" "$tmp/claims.csv" || rc=1
bad "$tmp/empty" "$tmp/claims.csv" || rc=1
echo "$H" >"$tmp/hdr/results.csv"; cp "$tmp/d/meta.csv" "$tmp/hdr/"
bad "$tmp/hdr" "$tmp/claims.csv" || rc=1
sed '/,spare,/s/,1\.0,1\.0,1\.0,/,1.0,abc,1.0,/' "$tmp/d/results.csv" >"$tmp/abc/results.csv"; cp "$tmp/d/meta.csv" "$tmp/abc/"
bad "$tmp/abc" "$tmp/claims.csv" || rc=1
cp "$tmp/d/results.csv" "$tmp/nometa/"
bad "$tmp/nometa" "$tmp/claims.csv" || rc=1
ok $rc "no directory, no results.csv, no rows, p50_us 'abc', no meta.csv: exit 2 with one line"
l=$(grep -n ',spare,' "$tmp/abc/results.csv" | cut -d: -f1)
"$IBCHAR" claims --claims "$tmp/claims.csv" "$tmp/abc" 2>&1 >/dev/null | grep -q "results.csv line $l: p50_us 'abc' is not a time"
ok $? "... the damaged cell (in a row no claim reads) named by line and column"
sed 's/sync=barrier;paper_us=0\.9/sync=barrier;paper_us=x1/' "$tmp/d/results.csv" >"$tmp/xabc/results.csv"; cp "$tmp/d/meta.csv" "$tmp/xabc/"
bad "$tmp/xabc" "$tmp/claims.csv" && grep -q "paper_us 'x1' is not a time" "$tmp/e"
ok $? "a metric in extra that is not a number: exit 2"
sed 's/,similar,1\.1,/,alike,1.1,/' "$tmp/claims.csv" >"$tmp/badclaims.csv"
bad "$tmp/d" "$tmp/badclaims.csv" && grep -q "badclaims.csv line 11: claim 'c-similar': expect is better, better-growing or similar, not 'alike'" "$tmp/e"
ok $? "a claims file with an unknown rule: exit 2, file, line and claim named"

# the shipped claims parse, and every one is judged
shipped=$here/../../results/claims
want=$(cat "$shipped"/*.csv | grep -vc '^id,')
"$IBCHAR" claims --claims "$shipped" "$tmp/d" >"$tmp/ship" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && head -n 1 "$tmp/ship" | grep -qx "1\.\.$want" && [ "$(grep -c '# SKIP not measurable here: no [a-z]* rows in this run' "$tmp/ship")" -eq "$want" ]
ok $? "the $want shipped claims parse; against toy rows each is not measurable (no rows of its suite)"
IBC_CLAIMS=$shipped "$IBCHAR" claims "$tmp/d" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ]; ok $? "IBC_CLAIMS names the claims (exit $rc)"
