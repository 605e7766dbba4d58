#!/bin/sh
# ibchar report: a real run (barrier over N = 2, 3 beside the host MPI when
# the Open MPI build is here, and the probe) and a compare of it with itself
# become one self-contained page: every PNG of the directory inlined as data,
# nothing fetched (no src/href to anywhere, no script), the provenance keys,
# the summary and factor tables, the verdicts, captions naming the paper's
# figure and testbed against this run's.  Rendered in headless Chromium
# (with name resolution off): every figure loaded with a non-zero natural
# size, the tables there, no error; a page with a broken figure is caught
# by the same check.  The screenshot is kept in $BUILD/artifacts/.
# The provenance counts the benches that had each value (meta.csv is a log
# of changes, replayed); table cells from oversubscribed points and rows
# with fewer than 30 kept samples are marked, with a legend.  The scorecard
# of the papers' claims gives every shipped claim the verdict ibchar claims
# gives it.
# The closed loop of ibchar model (lop-model.csv, lop-fanin.csv): predicted
# against measured and the error per row; no section without them.
# Bad input exits 2.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR" "$BUILD/bin/ibchar-barrier" "$BUILD/bin/ibchar-probe"
tap_tmp report
echo "1..23"
here=$(cd "$(dirname "$0")" && pwd)
d=$tmp/run

if [ -x "$BUILD/bin/ibchar-barrier-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	mpi="--mpi openmpi" variants=rds,rgm,mpi
else
	mpi="" variants=rds,rgm
fi
# shellcheck disable=SC2086
timeout 180 "$IBCHAR" run barrier --ranks 2,3 --variants $variants --fanin 1 --iters 200 \
	--xport shm $mpi --out "$d" >/dev/null 2>"$tmp/err" &&
	timeout 60 "$IBCHAR" run probe --iters 300 --out "$d" >/dev/null 2>>"$tmp/err"
rc=$?
ok $rc "a barrier and a probe run into one directory"
[ $rc -eq 0 ] || tail -5 "$tmp/err" | sed 's/^/# /'
"$IBCHAR" compare "$d" "$d" >"$tmp/self.tap" 2>/dev/null
ok $? "compare of the run with itself (its TAP kept for the report)"

timeout 300 "$IBCHAR" report "$d" --out "$tmp/r.html" --verdicts "$tmp/self.tap" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/r.html" ] && grep -qx "$tmp/r.html" "$tmp/out"
ok $? "ibchar report DIR --out FILE writes the page and prints its path (exit $rc)"
[ $rc -eq 0 ] || tail -5 "$tmp/err" | sed 's/^/# /'
npng=$(ls "$d"/*.png 2>/dev/null | wc -l)
nimg=$(grep -o '<img [^>]*src="data:image/png;base64,' "$tmp/r.html" | wc -l)
[ "$npng" -gt 0 ] && [ "$nimg" -eq "$npng" ]
ok $? "the figures were drawn and every PNG is inlined as data ($nimg of $npng)"
! grep -Eiq '(src|href)="(https?:|//|file:)|<script|<link|@import|url\(' "$tmp/r.html"
ok $? "self-contained: no script, no link, nothing fetched"
miss=""
for k in '>host<' '>kernel<' '>device<' '>MPI<' '>git revision<' '>sync method<' \
	'>clock error (us)<' '>placement probe (us, one-way)<'; do
	grep -q "$k" "$tmp/r.html" || miss="$miss $k"
done
# the closed loop: absent without lop-model.csv, shown with it
cl=$tmp/cl
mkdir -p "$cl" && cp "$d/results.csv" "$cl/"
cat >"$cl/lop-model.csv" <<'EOT'
suite,variant,xport,ranks,bytes,fanin,oversub,measured_us,measured_as,p50_us,lop_us,lop_err,lop_rtt_us,lop_rtt_err,loggp_us,loggp_err,rounds,note,lop_status,lop_rtt_status,loggp_status,best,best_err
barrier,rds,shm,2,0,,0,1.5,paper_us,1.6,,,1.2,-0.2,1.65,0.1,1,,no prediction: <= 0,ok,ok,LogGP,0.1
EOT
cat >"$cl/lop-fanin.csv" <<'EOT'
xport,ranks,bytes,lop_best_fanin,lop_us,lop_rtt_best_fanin,lop_rtt_us,loggp_best_fanin,loggp_us,measured_best_fanin,measured_us,model,model_fanin,measured_at_model_fanin_us,model_over_best,status
shm,2,0,,,1,1.2,1,1.6,1,1.5,LogGP,1,1.5,1.000,ok
EOT
"$IBCHAR" report "$cl" --out "$tmp/cl.html" >/dev/null 2>&1
! grep -q 'id="closed-loop"' "$tmp/r.html" && grep -q 'id="closed-loop"' "$tmp/cl.html" &&
	grep -q '>+10.0%</td>' "$tmp/cl.html" && grep -q '>-20.0%</td>' "$tmp/cl.html" &&
	grep -q '<td>no prediction: &lt;= 0</td>' "$tmp/cl.html" && grep -q '>1.000</td>' "$tmp/cl.html" &&
	grep -q '<td>paper_us</td>' "$tmp/cl.html"
ok $? "the closed loop: predicted, measured (and by what), the error per row, no prediction, the fan-in ratio"
[ -z "$miss" ]; ok $? "provenance: host, kernel, device, MPI, git revision, sync, clock error, probe${miss:+ (missing$miss)}"
grep -q '<caption>barrier: median (p50_us, slowest rank per iteration) by variant x ranks</caption>' "$tmp/r.html" &&
	grep -q '<td>rds</td>' "$tmp/r.html"
ok $? "the barrier pivot table"
if [ -n "$mpi" ]; then
	grep -q '<caption>barrier: factor vs mpi' "$tmp/r.html"; ok $? "the factor table against the host MPI"
else
	echo "ok 8 # SKIP no Open MPI build: no host-MPI rows"
	n=$((n + 1))
fi
grep -q '<caption>rows (p50_us' "$tmp/r.html" && grep -q '<td>probe-cross</td>' "$tmp/r.html"
ok $? "the probe's rows (one N) as a table"
grep -q 'reproduces <b>Kini et al.' "$tmp/r.html" && grep -q '<b>The paper:</b> 8 and 16 nodes' "$tmp/r.html" &&
	grep -q '<b>How the paper measured:</b> MPI_Barrier called 1000 times back to back' "$tmp/r.html" &&
	grep -q '<b>This run:</b> shm' "$tmp/r.html"
ok $? "a reproduced figure's caption names the paper's figure, its testbed, how it measured and this run"
# three benches: barrier at N = 2 and 3, the probe at 2
grep -q '<tr><th>ranks</th><td>2 <span class="dim">(2 of 3 benches)</span>, 3 <span class="dim">(1 of 3 benches)</span></td></tr>' "$tmp/r.html" &&
	grep -q '<tr><th>suite</th><td>barrier <span class="dim">(2 of 3 benches)</span>, probe <span class="dim">(1 of 3 benches)</span></td></tr>' "$tmp/r.html" &&
	grep -q 'its distinct values over the 3 benches of the run' "$tmp/r.html"
ok $? "provenance: each value with the number of benches that had it (ranks 2 in 2 of 3, 3 in 1 of 3)"
grep -q '(where the ranks sit: read the figures relative to it)' "$tmp/r.html" &&
	! grep -Eq 'near pair|far one|about 0\.05' "$tmp/r.html"
ok $? "provenance: no machine's near/far probe constants"
if [ "$(nproc)" -lt 3 ]; then
	grep -Eq '<td class="n">[0-9.]+<sup class="mark">\*</sup></td>' "$tmp/r.html" &&
		grep -q '<td class="note" colspan="[0-9]*">\* oversubscribed point' "$tmp/r.html"
	ok $? "cells of the oversubscribed N = 3 are marked *, with the legend"
else
	echo "ok $((n + 1)) # SKIP $(nproc) PUs: N = 3 is not oversubscribed here"
	n=$((n + 1))
fi
# one row (rds at N = 2) with 20 kept samples: its cells get ?
mkdir "$tmp/few"
cp "$d/meta.csv" "$tmp/few/"
awk -F, 'BEGIN { OFS = "," } $3 == "rds" && $9 == 2 { $12 = 20 } { print }' "$d/results.csv" >"$tmp/few/results.csv"
"$IBCHAR" report "$tmp/few" --no-plot --out "$tmp/few.html" >/dev/null 2>&1
[ "$(grep -c '<sup class="mark">?</sup>' "$tmp/few.html")" -ge 1 ] &&
	grep -q 'fewer than 30 kept samples (iters)' "$tmp/few.html" &&
	! grep -q '<sup class="mark">?</sup>' "$tmp/r.html"
ok $? "a row with fewer than 30 kept samples: its cells are marked ?, with the legend"
# the scorecard: the same verdicts as ibchar claims, claim by claim
"$IBCHAR" claims "$d" >"$tmp/claims.tap" 2>/dev/null; crc=$?
awk '/^ok [0-9]+ - .*# SKIP /{ print $4, "skip"; next } /^ok /{ print $4, "pass"; next } /^not ok /{ print $5, "fail" }' \
	"$tmp/claims.tap" >"$tmp/tap.v"
sed -n 's/.*<tr class="\([a-z]*\)" id="claim-\([^"]*\)">.*/\2 \1/p' "$tmp/r.html" >"$tmp/rep.v"
nclaims=$(cat "$here"/../../results/claims/*.csv | grep -vc '^id,')
[ $crc -le 1 ] && [ "$(wc -l <"$tmp/rep.v")" -eq "$nclaims" ] && cmp -s "$tmp/tap.v" "$tmp/rep.v" &&
	grep -q '<h2 id="scorecard">' "$tmp/r.html"
ok $? "the scorecard: all $nclaims claims, each with ibchar claims' verdict (claims exit $crc)"
[ $crc -le 1 ] || sed 's/^/# /' "$tmp/claims.tap" | tail -3
grep -q '<tr class="skip" id="claim-kini-rgm-slower-at-2-4">.*<td class="verdict">not measurable here</td><td>needs hardware multicast (this run: transport shm' "$tmp/r.html" &&
	grep -Eq '<p class="(pass|fail)">[0-9]+ reproduced, [0-9]+ not reproduced, [0-9]+ not measurable here</p>' "$tmp/r.html"
ok $? "... a claim that needs hardware multicast is not measurable on shm, with the reason; the counts"
want=$(grep -c '^ok ' "$tmp/self.tap")
grep -q "$want of $want verdicts hold" "$tmp/r.html" && grep -q 'self.tap' "$tmp/r.html"
ok $? "the verdicts of the compare ($want of $want hold)"

# bad input
"$IBCHAR" report "$tmp/none" >/dev/null 2>&1; rc1=$?
mkdir "$tmp/empty"; "$IBCHAR" report "$tmp/empty" >/dev/null 2>&1; rc2=$?
"$IBCHAR" report "$d" --no-plot --verdicts "$tmp/nope.tap" --out "$tmp/x.html" >/dev/null 2>&1; rc3=$?
"$IBCHAR" report >/dev/null 2>&1; rc4=$?
[ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && [ $rc3 -eq 2 ] && [ $rc4 -eq 2 ] && [ ! -e "$tmp/x.html" ]
ok $? "no directory, no results.csv, a missing verdict file, no DIR: exit 2 ($rc1 $rc2 $rc3 $rc4)"
"$IBCHAR" report "$d" --no-plot --out "$tmp/none/r.html" >/dev/null 2>&1; rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ]; ok $? "an unwritable --out fails cleanly (exit $rc)"

# the browser
chrome=${IBC_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chrome" ]; then
	for i in 20 21 22; do echo "ok $i # SKIP no chromium (apt-get install chromium)"; done
	exit 0
fi
# check FILE: renders a copy of FILE with report_check.html injected, prints its IBCCHECK line
check() {
	sed "/<head>/r $here/report_check.html" "$1" >"$1.check.html"
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run \
		--host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 \
		--user-data-dir="$tmp/chrome" --dump-dom "file://$1.check.html" 2>/dev/null |
		sed -n 's/.*<pre id="ibc-check">\(IBCCHECK[^<]*\)<.*/\1/p'
}
res=$(check "$tmp/r.html")
echo "# $res"
echo "$res" | grep -Eq "^IBCCHECK images=$npng broken=0 tables=([5-9]|[1-9][0-9]+) errors=0 "
ok $? "Chromium renders it: $npng figures loaded (non-zero natural size), the tables there, no errors"
sed '0,/base64,iVBOR/s//base64,AAAA/' "$tmp/r.html" >"$tmp/broken.html"
res=$(check "$tmp/broken.html")
echo "# $res"
echo "$res" | grep -Eq "broken=1 .*errors=1 "
ok $? "... and the same check catches a page with one broken figure"
mkdir -p "$BUILD/artifacts"
art=$(cd "$BUILD/artifacts" && pwd)
cp "$tmp/r.html" "$art/report.html"
rm -f "$art/report.png"
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
	--host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir="$tmp/chrome" \
	--window-size=1280,4000 --screenshot="$art/report.png" "file://$art/report.html" >/dev/null 2>&1
# a PNG's width and height are bytes 17-24 (IHDR)
wh=$(od -An -tu1 -j16 -N8 "$art/report.png" 2>/dev/null | awk '{ print $3 * 256 + $4, $7 * 256 + $8 }')
[ "$wh" = "1280 4000" ]; ok $? "the screenshot is kept: $art/report.png ($wh)"
