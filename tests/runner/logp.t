#!/bin/sh
# `ibchar run logp barrier alltoall` end to end on shm, and `ibchar model`:
# every kernel writes rows for p = 1..N-1 at both sizes (the copy kernels
# one row per size and N, no fanin), fits.csv has a
# fitted row per kernel at N = 8 (and says why there is none at N = 2),
# logp-derived.csv holds L(p), L_list(p) and LogGP's o, g, L, G; the closed
# loop predicts every barrier and all-to-all algorithm's rows (not the host
# MPI's; no negative time, oversubscribed rows not modelled), extrapolates
# to 64 K and picks RGM's fan-in, with the copy and user-write terms;
# `ibchar model` again,
# with --fits from another directory and --measured mean, and its errors (no fits: exit 1; no
# directory: exit 2); bad rank counts refused; rtt-pool-1n at 17 fan-ins at once;
# the round-trip kernels a collective is made of (rtt-write-1n, its post
# list, rtt-mcast, the exchanges) also run back to back (paper_us, b2b_p50_us), validated
# and with datagrams lost, the others not.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$IBCHAR" "$BUILD/bin/ibchar-logp"
tap_tmp logp
echo "1..22"

timeout 300 "$IBCHAR" run logp barrier alltoall --ranks 2,8 --sizes 1,4096 --iters 50 --xport shm \
	--out "$tmp/a" >"$tmp/sum" 2>"$tmp/err"; rc=$?
ok $rc "ibchar run logp barrier alltoall exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -10
R=$tmp/a/results.csv
# every fan-in kernel at N = 8: p = 1..7 at 1 B (the inline ones too) and 4096 B (not inline)
bad=$("$BUILD/bin/ibchar-logp" --list | grep -Ev '^(loggp|copy|rtt-mcast|xchg)' | while read -r v; do
	for b in 1 4096; do
		case $v-$b in *inline-4096) continue ;; esac
		c=$(awk -F, -v v="$v" -v b="$b" 'NR > 1 && $2 == "logp" && $3 == v && $9 == 8 &&
			$10 == b && $11 >= 1 && $11 <= 7 { n++ } END { print n + 0 }' "$R")
		[ "$c" -eq 7 ] || echo "$v@$b:$c"
	done
done)
[ -z "$bad" ]; ok $? "every kernel has p = 1..7 at N = 8, both sizes${bad:+ (short: $bad)}"
c=$(grep -c ',logp,loggp-prtt[1nd],' "$R")
[ "$c" -eq 12 ]; ok $? "PRTT kernels: 3 x 2 sizes x 2 N ($c rows)"
c=$(grep -cE ',logp,copy(-peer)?,ibchar,shm,[^,]*,[^,]*,[^,]*,[28],(1|4096),,' "$R")
[ "$c" -eq 8 ]; ok $? "copy kernels: 2 x 2 sizes x 2 N, no fanin ($c rows)"
# rtt-mcast: ranks 0 and 1 alone, no fanin; 4096 B and its 8-byte iteration
# are past shm's multicast MTU (4096): no row
c=$(grep -cE ',logp,rtt-mcast,ibchar,shm,[^,]*,[^,]*,[^,]*,[28],1,,.*kernel=rtt-mcast;.*p=1' "$R")
c4=$(grep -c ',logp,rtt-mcast,.*,4096,' "$R")
[ "$c" -eq 2 ] && [ "$c4" -eq 0 ]
ok $? "rtt-mcast: one row per N at 1 B, no fanin; none at 4096 B ($c, $c4 rows)"
# xchg-write, xchg-pool and xchg-write-readout-flag: every pair at once, no
# fanin: one row per N and size
X='xchg-(write|pool|write-readout-flag)'
c=$(grep -cE ",logp,$X,ibchar,shm,[^,]*,[^,]*,[^,]*,2,(1|4096),,.*kernel=xchg;.*pairs=1" "$R")
c8=$(grep -cE ",logp,$X,ibchar,shm,[^,]*,[^,]*,[^,]*,8,(1|4096),,.*kernel=xchg;.*pairs=4" "$R")
[ "$c" -eq 6 ] && [ "$c8" -eq 6 ]
ok $? "xchg-write, xchg-pool, xchg-write-readout-flag: one row per N and size, no fanin, N/2 pairs ($c, $c8 rows)"
F=$tmp/a/fits.csv
c=$(grep -cE ',min,(ov|rtt),8,.*,ok,[0-9.]+,(rtt|ov)[1-6]' "$F")
[ "$c" -ge 20 ]; ok $? "fits.csv: most of the 28 kernels x sizes fitted at N = 8 (min: $c)"
grep -q ',os-send,1,min,ov,2,1,.*too few points' "$F"; ok $? "... and N = 2 says why it has no fit"
D=$tmp/a/logp-derived.csv
grep -q ',8,L,write,1,min,3,' "$D" && grep -q ',8,L_list,send,1,' "$D" &&
	grep -q ',loggp_o,send,1,p50,' "$D" && grep -q ',loggp_G,send,0,p50,' "$D"
ok $? "logp-derived.csv: L(p), L_list(p), LogGP's o and G"
M=$tmp/a/lop-model.csv
miss=
for v in rpe rds rgm pe ds; do
	for N in 2 8; do
		grep -q "^barrier,$v,shm,$N,1," "$M" || miss="$miss $v@$N"
	done
done
for v in hrwg de bruck pairwise direct; do grep -q "^alltoall,$v,shm,8,4096," "$M" || miss="$miss $v"; done
[ -z "$miss" ]; ok $? "lop-model.csv predicts every algorithm's rows${miss:+ (missing:$miss)}"
grep -q "LoP closed loop" "$tmp/sum" && grep -q "per algorithm (rows modelled), mean |err|" "$tmp/sum" &&
	grep -q "^copy term: each algorithm's local copies" "$tmp/sum" &&
	grep -q "^user-write term: each write into" "$tmp/sum" &&
	grep -q "^multicast release: costed by rtt-mcast" "$tmp/sum"
ok $? "ibchar run prints the closed loop's table, with the copy and user-write terms and the release's kernel"
# N = 8 on fewer than 8 PUs is not modelled; on 8 or more the model picks l
grep -q '^barrier,rds,shm,65536,1,,[0-9]' "$tmp/a/lop-extrapolation.csv" &&
	grep -Eq '^shm,2,1,.*,1,[0-9.]+,1\.000,ok$' "$tmp/a/lop-fanin.csv" &&
	grep -Eq '^shm,8,1,.*(not modelled \(oversubscribed\)|,[137],[0-9.]+,[0-9.]+,ok)$' "$tmp/a/lop-fanin.csv"
rc=$?
ok $rc "extrapolation to 64 K and RGM's fan-in by the model, measured at it over the best"
[ $rc -eq 0 ] || { grep -E '^shm' "$tmp/a/lop-fanin.csv"; grep '^barrier,rds,shm,65536' "$tmp/a/lop-extrapolation.csv"; } | sed 's/^/# /'
# no negative time, and every oversubscribed row not modelled
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["lop_us"] + 0 < 0 || $c["lop_rtt_us"] + 0 < 0 || $c["loggp_us"] + 0 < 0 { bad++ }
	$c["oversub"] == 1 && $c["lop_status"] != "not modelled (oversubscribed)" { bad++ }
	END { exit bad > 0 }' "$M"
ok $? "lop-model.csv: no negative prediction; oversubscribed rows not modelled"

# the model again, the fits from another directory
"$IBCHAR" run barrier --ranks 4 --iters 50 --xport shm --out "$tmp/b" >/dev/null 2>&1
"$IBCHAR" model --fits "$tmp/a" "$tmp/b" >"$tmp/m" 2>"$tmp/merr"; rc=$?
[ $rc -eq 0 ] && grep -q '^barrier,rgm,shm,4,0,3,' "$tmp/b/lop-model.csv" &&
	! grep -q ',mpi' "$tmp/b/lop-model.csv"
ok $? "ibchar model --fits A B predicts B's rows with A's fits (exit $rc)"
# rows measured by their loops' medians, or with --measured mean their means
med=$(grep -c '^barrier,[a-z]*,shm,4,[0-9]*,[0-9]*,[01],[^,]*,b2b_p50_us,' "$tmp/b/lop-model.csv")
"$IBCHAR" model --fits "$tmp/a" --measured mean "$tmp/b" >"$tmp/m" 2>"$tmp/merr"; rc=$?
mean=$(grep -c '^barrier,[a-z]*,shm,4,[0-9]*,[0-9]*,[01],[^,]*,paper_us,' "$tmp/b/lop-model.csv")
"$IBCHAR" model --fits "$tmp/a" --measured mode "$tmp/b" >/dev/null 2>"$tmp/merr2"; rc2=$?
[ $rc -eq 0 ] && [ "$med" -ge 5 ] && [ "$mean" -eq "$med" ] && [ $rc2 -eq 2 ] &&
	grep -qF 'median|mean' "$tmp/merr2"
ok $? "measured by the loop's median ($med rows), --measured mean by its mean ($mean); --measured mode: exit $rc2"
"$IBCHAR" model "$tmp/b" >/dev/null 2>"$tmp/merr"; rc=$?
[ $rc -eq 1 ] && grep -q 'no fitted model' "$tmp/merr"
ok $? "... no fits.csv: exit 1 and why ($rc)"
"$IBCHAR" model >/dev/null 2>&1; rc=$?
"$BUILD/bin/ibchar-logp" --ranks 1 >/dev/null 2>&1; rc2=$?
[ $rc -eq 2 ] && [ $rc2 -eq 2 ]; ok $? "no directory: exit 2; ibchar-logp --ranks 1: exit 2 ($rc, $rc2)"

# the back-to-back loop: on the write round trips, rtt-mcast and the
# exchanges, every row; on no other kernel
K=',logp,(rtt-write-1n|rtt-write-1n-list|rtt-mcast|xchg-write|xchg-pool|xchg-write-readout-flag),'
b2b=$(grep -E "$K" "$R" | grep -c 'paper_us=[0-9.]*;b2b_p50_us=[0-9.]*;b2b_n=[1-9]')
all=$(grep -cE "$K" "$R")
other=$(grep ',logp,' "$R" | grep -vE "$K" | grep -c 'paper_us=')
[ "$all" -ge 36 ] && [ "$b2b" -eq "$all" ] && [ "$other" -eq 0 ]
ok $? "rtt-write-1n, its post list, rtt-mcast and the exchanges run back to back in every row, no other kernel ($b2b of $all; $other others)"

# back to back and validated, nothing lost: rank 1 posts its next receive
# inside the loop (else each datagram would wait out its 2 ms and be sent
# again), the flags are cleared in the loop though validated (the block
# exchange's flag lines too: a flag left set would release a pair early,
# one never set would hang it)
timeout 300 "$BUILD/bin/ibchar-logp" --xport shm --ranks 3 \
	--variants rtt-mcast,rtt-write-1n,xchg-write-readout-flag --sizes 8 \
	--fanin 1,2 --iters 50 --warmup 5 --validate --out "$tmp/b2b" >/dev/null 2>"$tmp/b2b.err"; rc=$?
bad=$(awk -F, 'NR > 1 && /,logp,/ {
	n = $NF; r = 0; b = 0; v = 0
	if (match(n, /resent=[0-9]+/)) r = substr(n, RSTART + 7, RLENGTH - 7) + 0
	if (match(n, /b2b_n=[0-9]+/)) b = substr(n, RSTART + 6, RLENGTH - 6) + 0
	if (n ~ /valid=1/) v = 1
	rows++
	if (!v || b < 100 || r * 2 >= b) print $3 "/" $11 ": valid " v ", b2b_n " b ", resent " r
} END { if (rows != 4) print rows " rows, not 4" }' "$tmp/b2b/results.csv" 2>&1)
[ $rc -eq 0 ] && [ -z "$bad" ]
ok $? "back to back, validated: every row valid, the datagrams not sent again (exit $rc${bad:+; $bad})"
[ $rc -eq 0 ] || tail -5 "$tmp/b2b.err" | sed 's/^/# /'

# rtt-pool-1n at more fan-ins than a process may have transports with a
# receive pool (16): its instances, one per p, share one transport
timeout 300 "$BUILD/bin/ibchar-logp" --xport shm --ranks 21 --variants rtt-pool-1n --sizes 8 \
	--iters 5 --warmup 1 --validate --out "$tmp/pool" >/dev/null 2>"$tmp/pool.err"; rc=$?
c=$(grep -c ',logp,rtt-pool-1n,.*valid=1' "$tmp/pool/results.csv" 2>/dev/null)
[ $rc -eq 0 ] && [ "$c" -eq 17 ]
ok $? "rtt-pool-1n at N = 21: p = 1..16 and 20 set up at once, every row valid ($c of 17, exit $rc)"
[ $rc -eq 0 ] || tail -5 "$tmp/pool.err" | sed 's/^/# /'

# rtt-mcast loses datagrams (--mcast-drop): rank 0 sends each again until
# rank 1 answers; every row still valid, the resends counted; rank 2 idle;
# in the back-to-back loop too (a copy sent again that arrives after the
# next receive is posted is dropped by its iteration)
timeout 300 "$BUILD/bin/ibchar-logp" --xport shm --ranks 3 --variants rtt-mcast --sizes 8,64 \
	--iters 100 --warmup 5 --validate --mcast-drop 0.2 --out "$tmp/mc" >/dev/null 2>"$tmp/mc.err"; rc=$?
c=$(grep -c ',logp,rtt-mcast,.*valid=1;.*resent=[1-9]' "$tmp/mc/results.csv" 2>/dev/null)
[ $rc -eq 0 ] && [ "$c" -eq 2 ]
ok $? "rtt-mcast with 20% of datagrams lost: both rows valid, resends counted ($c of 2, exit $rc)"
[ $rc -eq 0 ] || tail -5 "$tmp/mc.err" | sed 's/^/# /'

# back to back rank 0 turns around in one call, as RGM's root: it awaits
# the write back of the call before and sends this call's datagram at once
# (b2b_root=await-send); the loop's last write back is awaited after the
# loop (b2b_end), its datagram sent again when lost.  Half the datagrams
# lost, six loops of 7-16 calls (the budget cuts them): some loop's last
# datagram is lost (with this seed), and without b2b_end rank 1 waits 30 s
# for it and the run fails
timeout 120 "$BUILD/bin/ibchar-logp" --xport shm --ranks 2 --variants rtt-mcast \
	--sizes 8,16,24,32,40,48 --iters 1000 --warmup 2 --budget 0.03 --validate --mcast-drop 0.5 \
	--out "$tmp/mc2" >/dev/null 2>"$tmp/mc2.err"; rc=$?
c=$(grep -cE ',logp,rtt-mcast,.*valid=1;.*b2b_n=[0-9]+;.*b2b_root=await-send;resent=[1-9]' \
	"$tmp/mc2/results.csv" 2>/dev/null)
[ $rc -eq 0 ] && [ "$c" -eq 6 ]
ok $? "rtt-mcast back to back with half the datagrams lost: rank 0 awaits, then sends; every loop's last datagram answered; six rows valid ($c of 6, exit $rc)"
[ $rc -eq 0 ] || tail -5 "$tmp/mc2.err" | sed 's/^/# /'
