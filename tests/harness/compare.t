#!/bin/sh
# ibchar compare: synthetic runs whose samples are drawn with a known shift
# (a row 20% slower is flagged, 20% faster is reported and passes), the same
# run against itself and two runs of pure noise flag nothing, a row missing
# in NEW fails, a slower placement probe turns a uniform slowdown into
# "placement", an oversubscribed row is advisory unless --strict, so is a
# row slower per iteration whose back-to-back median is unchanged, the probe
# suite's rows (placement) are advisory and stay out of the spread, a row
# timed in another group than in BASE says so, JUnit XML
# counts the failures; bad input exits 2.  End to end:
# the barrier suite keeps its samples (samples.csv: one row per results row,
# n = iters), and IBC_SLOWDOWN=rds:50 makes compare flag rds.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR" "$BUILD/bin/ibchar-barrier"
tap_tmp compare
echo "1..22"

# mk DIR SEED SCALE_ROW1 SCALE_ROW2 PROBE [DROP_ROW]: 4 rows of 400 log-normal samples
mk() {
	python3 - "$@" <<'PYEOF'
import csv, os, random, sys
d, seed, s1, s2, probe = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
drop = int(sys.argv[6]) if len(sys.argv) > 6 else -1
over = {int(x) for x in sys.argv[7].split(',')} if len(sys.argv) > 7 else set()
oprobe = sys.argv[8] if len(sys.argv) > 8 else probe
os.makedirs(d, exist_ok=True)
rnd = random.Random(seed)
rows = [("barrier", "rds", "ibchar", "shm", "4", "0", ""), ("barrier", "rgm", "ibchar", "shm", "4", "0", "3"),
        ("alltoall", "hrwg", "ibchar", "shm", "4", "4096", ""), ("link", "write-lat", "ibchar", "shm", "2", "8", "")]
with open(d + "/samples.csv", "w", newline="") as f, open(d + "/results.csv", "w", newline="") as g:
    w = csv.writer(f); w.writerow(["run_id", "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin", "n", "samples_us"])
    r = csv.writer(g); r.writerow(["run_id", "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin", "p50_us", "probe_us", "oversub"])
    for i, k in enumerate(rows):
        if i == drop:
            continue
        scale = s1 if i == 1 else s2 if i == 2 else 1.0
        base = 2.0 + i
        v = sorted(base * scale * rnd.lognormvariate(0, 0.05) for _ in range(400))
        w.writerow(["run"] + list(k) + [len(v), " ".join("%.4f" % x for x in v)])
        r.writerow(["run"] + list(k) + ["%.4f" % v[200], oprobe if i in over else probe, 1 if i in over else 0])
PYEOF
}
# expect EXIT REGEX TEXT COMPARE-ARGS...: compare exits EXIT and prints a line matching REGEX
expect() {
	want=$1 re=$2 text=$3
	shift 3
	"$IBCHAR" compare "$@" >"$tmp/out" 2>&1; rc=$?
	[ $rc -eq "$want" ] && grep -q "$re" "$tmp/out"
	ok $? "$text (exit $rc)"
}
mk "$tmp/base" 1 1 1 0.1
mk "$tmp/noise" 2 1 1 0.1
mk "$tmp/shift" 3 1.2 0.8 0.1
mk "$tmp/miss" 4 1 1 0.1 3
mk "$tmp/far" 5 1.25 1.25 0.2

"$IBCHAR" compare "$tmp/base" "$tmp/base" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^ok .*unchanged 1.000x' "$tmp/out")" -eq 4 ]; ok $? "a run against itself: 4 rows unchanged at 1.000x, exit 0 (exit $rc)"
"$IBCHAR" compare "$tmp/base" "$tmp/noise" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && ! grep '^ok\|^not ok' "$tmp/out" | grep -q 'slower\|faster'; ok $? "two runs of pure noise: nothing slower or faster, exit 0 (exit $rc)"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/out"
"$IBCHAR" compare --junit "$tmp/j.xml" "$tmp/base" "$tmp/shift" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; ok $? "a row 20% slower: exit 1 (exit $rc)"
grep -q '^not ok 2 - barrier rgm (ibchar, shm) N=4 bytes=0 fanin=3: slower 1\.[12]' "$tmp/out"; ok $? "... the slower row is 'not ok', with its ratio"
grep -q '^ok 3 - alltoall hrwg .*: faster 0\.[78]' "$tmp/out"; ok $? "... the faster row is reported and passes"
[ "$(grep -c '^not ok' "$tmp/out")" -eq 1 ]; ok $? "... and nothing else is flagged"
python3 -c "
import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1]).getroot()
assert t.tag == 'testsuite' and t.get('tests') == '4' and t.get('failures') == '1', t.attrib
assert len(t.findall('testcase/failure')) == 1
" "$tmp/j.xml"; ok $? "--junit: a testsuite of 4 cases, 1 failure"
"$IBCHAR" compare "$tmp/base" "$tmp/miss" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 4 - link write-lat .*missing in NEW' "$tmp/out"; ok $? "a row missing in NEW fails (exit $rc)"
"$IBCHAR" compare "$tmp/base" "$tmp/far" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^ok .*: slower with the placement' "$tmp/out" && grep -q 'probe 0.100 -> 0.200' "$tmp/out"
ok $? "NEW on a 2x slower placement: 25% slower rows are placement, not regressions (exit $rc)"
mk "$tmp/obase" 1 1 1 0.1 -1 1
mk "$tmp/oshift" 3 1.2 1 0.1 -1 1
expect 0 '^ok 2 - barrier rgm .*slower 1\.[12][0-9]*x .*oversubscribed: advisory' \
	"an oversubscribed row 20% slower: reported as advisory, exit 0" "$tmp/obase" "$tmp/oshift"
expect 1 '^not ok 2 - barrier rgm .*slower.*oversubscribed$' "... and with --strict it fails" \
	--strict "$tmp/obase" "$tmp/oshift"
mk "$tmp/pbase" 1 1 1 0.1 -1 0,2,3
mk "$tmp/pnew" 3 1.2 1 0.1 -1 0,2,3 2.0
"$IBCHAR" compare "$tmp/pbase" "$tmp/pnew" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q '^not ok 2 - barrier rgm .*slower 1\.[12]' "$tmp/out" && grep -q 'probe 0.100 -> 0.100' "$tmp/out"
ok $? "the placement probe of a run is its rows' that are not oversubscribed: a 20x probe on 3 oversubscribed rows excuses nothing (exit $rc)"
# addextra DIR TEMPLATE V,...: results.csv's extra cell per row, TEMPLATE with
# every %s replaced by the row's V
addextra() {
	python3 - "$@" <<'PYEOF'
import csv, sys
d, tpl, vals = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
rows = list(csv.reader(open(d + "/results.csv")))
rows[0].append("extra")
for r, v in zip(rows[1:], vals):
    r.append(tpl.replace("%s", v))
csv.writer(open(d + "/results.csv", "w", newline="")).writerows(rows)
PYEOF
}
B2B='sync=window;paper_us=%s;b2b_p50_us=%s'
mk "$tmp/wbase" 1 1 1 0.1; addextra "$tmp/wbase" "$B2B" 1,2,3,4
mk "$tmp/wsame" 3 1.2 1 0.1; addextra "$tmp/wsame" "$B2B" 1,2.02,3,4
mk "$tmp/wslow" 3 1.2 1 0.1; addextra "$tmp/wslow" "$B2B" 1,2.4,3,4
expect 0 '^ok 2 - barrier rgm .*slower per iteration 1\.[12][0-9]*x .*back to back unchanged 1\.010x: advisory' \
	"a row 20% slower per iteration, back to back unchanged: advisory, exit 0" "$tmp/wbase" "$tmp/wsame"
expect 1 '^not ok 2 - barrier rgm .*slower 1\.[12]' "... slower back to back too (1.2x): it fails" \
	"$tmp/wbase" "$tmp/wslow"
expect 1 '^not ok 2 - barrier rgm .*slower 1\.[12]' \
	"... and with --strict the per-iteration-only row fails" --strict "$tmp/wbase" "$tmp/wsame"
# mk12 DIR SEED SLOW PROBE1 PROBE2: 10 rows (the last, link write-lat, scaled by
# SLOW) and the probe suite's 2 rows scaled by PROBE1 and PROBE2
mk12() {
	python3 - "$@" <<'PYEOF'
import csv, os, random, sys
d, seed, slow, p1, p2 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
os.makedirs(d, exist_ok=True)
rnd = random.Random(seed)
rows = [("barrier", v, "ibchar", "shm", str(n), "0", "") for v in ("rds", "rpe", "rgm") for n in (2, 3, 4)]
rows += [("link", "write-lat", "ibchar", "shm", "2", "8", ""), ("probe", "probe-cross", "ibchar", "shm", "2", "0", ""),
         ("probe", "probe-write", "ibchar", "shm", "2", "0", "")]
scale = [1.0] * 9 + [slow, p1, p2]
with open(d + "/samples.csv", "w", newline="") as f, open(d + "/results.csv", "w", newline="") as g:
    w = csv.writer(f); w.writerow(["run_id", "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin", "n", "samples_us"])
    r = csv.writer(g); r.writerow(["run_id", "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin", "p50_us", "probe_us", "oversub"])
    for i, k in enumerate(rows):
        v = sorted((2.0 + i) * scale[i] * rnd.lognormvariate(0, 0.05) for _ in range(400))
        w.writerow(["run"] + list(k) + [len(v), " ".join("%.4f" % x for x in v)])
        r.writerow(["run"] + list(k) + ["%.4f" % v[200], "0.1", 0])
PYEOF
}
mk12 "$tmp/qbase" 1 1 1 1
mk12 "$tmp/qnew" 2 1.5 0.3 2.5
expect 1 '^not ok 10 - link write-lat .*slower 1\.[45]' \
	"the probe suite's rows stay out of the spread: probes moved 0.3x and 2.5x, a 1.5x slower row still fails" \
	"$tmp/qbase" "$tmp/qnew"
expect 1 '^ok 12 - probe probe-write .*slower 2\.[45].*a placement probe: advisory' \
	"... and a slower probe row is advisory" "$tmp/qbase" "$tmp/qnew"
mk "$tmp/gbase" 1 1 1 0.1; addextra "$tmp/gbase" 'sync=window;group=%s' 1/2,1/2,2/2,1/2
mk "$tmp/gnew" 2 1 1 0.1; addextra "$tmp/gnew" 'sync=window;group=%s' 1/2,1/3,2/3,1/2
"$IBCHAR" compare "$tmp/gbase" "$tmp/gnew" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^ok 2 - barrier rgm .*; timed group 1/2 -> 1/3$' "$tmp/out" &&
	! grep -q '^ok 1 - .*timed group' "$tmp/out" && grep -q '^# 2 rows were timed in another group' "$tmp/out"
ok $? "a row timed in another group than in BASE says so (1/2 -> 1/3), and the summary counts them (exit $rc)"
"$IBCHAR" compare "$tmp/base" "$tmp/nosuch" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "a directory without samples.csv: exit 2 (exit $rc: $(head -1 "$tmp/out"))"
"$IBCHAR" compare "$tmp/base" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "one directory: exit 2"

# end to end on the barrier suite
B=$BUILD/bin/ibchar-barrier
# two runs, the second with rds slowed down; when the machine moved the ranks
# to a slower pair of PUs between them (the placement probe says so), compare
# rightly calls rds "slower with the placement": the pair is measured again
for attempt in 1 2 3; do
	rm -rf "$tmp/a" "$tmp/b"
	timeout 120 "$B" --ranks 2 --variants rds,rpe --iters 3000 --out "$tmp/a" -q >/dev/null 2>&1; rc1=$?
	IBC_SLOWDOWN=rds:50 timeout 120 "$B" --ranks 2 --variants rds,rpe --iters 3000 --out "$tmp/b" -q >/dev/null 2>&1; rc2=$?
	"$IBCHAR" compare "$tmp/a" "$tmp/b" >"$tmp/out" 2>&1
	grep -q '^ok .*: slower with the placement' "$tmp/out" || break
	echo "# attempt $attempt: the placement changed between the runs ($(sed -n 2p "$tmp/out")); again"
done
cnt=$(python3 -c "
import csv, sys
r = [x for x in csv.DictReader(open(sys.argv[1] + '/results.csv'))]
s = {(x['variant']): x for x in csv.DictReader(open(sys.argv[1] + '/samples.csv'))}
print(sum(1 for x in r if x['variant'] in s and s[x['variant']]['n'] == x['iters'] and len(s[x['variant']]['samples_us'].split()) == int(x['iters'])))
" "$tmp/a" 2>&1)
[ $rc1 -eq 0 ] && [ "$cnt" = 2 ]; ok $? "ibchar-barrier keeps its samples: samples.csv, n = iters, for rds and rpe ($cnt)"
"$IBCHAR" compare "$tmp/a" "$tmp/b" >"$tmp/out" 2>&1; rc=$?
[ $rc2 -eq 0 ] && [ $rc -eq 1 ] && grep -q '^not ok .*barrier rds .*slower' "$tmp/out"; ok $? "IBC_SLOWDOWN=rds:50: compare flags rds slower (exit $rc)"
[ $rc -eq 1 ] || sed 's/^/# /' "$tmp/out"
