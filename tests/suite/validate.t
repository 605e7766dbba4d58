#!/bin/sh
# What --validate promises (suite.h, the README's "valid=1"), suite by suite
# on shm: the validated rows say valid=1 and what was checked (checked=bytes:
# every byte of every message of every iteration; checked=order: no rank left
# a barrier before all had entered), and a mutant -- IBC_CORRUPT flips one
# byte of one message in the middle of a stream, or makes one rank leave one
# barrier early -- turns that variant's row into valid=0 and the bench's exit
# status into 1, while the other variant's row stays valid=1.  Every case
# below is one the checks of before missed (a -bw stream checked on its last
# message only, a -bibw not at all, rdma-write-bw in slot 0 only, mpi-bw on
# its last receive, link's bursts and streams once after the last iteration,
# logp not at all).  IBC_TEST_XPORT=verbs runs it on an RDMA device (the
# Soft-RoCE guest's list, tests/rxe/one-guest.list).
. "$(dirname "$0")/../lib/tap.sh"
for s in link barrier alltoall channel logp; do tap_need "$BUILD/bin/ibchar-$s"; done
tap_tmp validate
echo "1..104"

# rows of $1/results.csv whose variant is $2 and whose extra has $3
rows() {
	awk -F, -v v="$2" -v k="$3" 'NR > 1 && $3 == v && (k == "" || index(";" $26 ";", ";" k ";")) { c++ }
		END { print c + 0 }' "$1/results.csv" 2>/dev/null
}

# $1 label, $2 checked=, $3 the mutant's variant, $4 another variant, $5
# IBC_CORRUPT, $6 what stderr must say, then the command (without --validate,
# --budget and --out): 4 checks.  No budget: the mutant's iteration must run
# however slow the machine is that minute (a budget that cut the timed run
# short of it would leave nothing to catch)
case_run() {
	label=$1 what=$2 bad=$3 good=$4 mut=$5 says=$6
	shift 6
	out=$tmp/$(echo "$label" | tr -c 'a-z0-9\n' '-')
	IBC_CORRUPT= timeout 300 "$@" --validate --budget 0 --out "$out-ok" >/dev/null 2>"$out-ok.err"; rc=$?
	nb=$(rows "$out-ok" "$bad" "valid=1;checked=$what")
	ng=$(rows "$out-ok" "$good" "valid=1;checked=$what")
	[ $rc -eq 0 ] && [ "$nb" -gt 0 ] && [ "$nb" -eq "$(rows "$out-ok" "$bad" "")" ] &&
		[ "$ng" -eq "$(rows "$out-ok" "$good" "")" ]
	ok $? "$label: exit 0, every row of $bad and $good valid=1;checked=$what (exit $rc, $nb, $ng)"
	[ $rc -eq 0 ] || tail -5 "$out-ok.err" | sed 's/^/# /'
	IBC_CORRUPT=$mut timeout 300 "$@" --validate --budget 0 --out "$out-bad" >/dev/null 2>"$out-bad.err"; rc=$?
	[ $rc -eq 1 ]; ok $? "$label: IBC_CORRUPT=$mut: exit 1 (got $rc)"
	nb=$(rows "$out-bad" "$bad" "valid=0;checked=$what")
	[ "$nb" -gt 0 ] && [ "$nb" -eq "$(rows "$out-bad" "$bad" "")" ] &&
		[ "$(rows "$out-bad" "$good" "valid=1;checked=$what")" -eq "$(rows "$out-bad" "$good" "")" ]
	ok $? "$label: ... $bad's rows valid=0 ($nb), $good's valid=1"
	grep -q "IBC_CORRUPT: $bad rank" "$out-bad.err" && grep -q "$says" "$out-bad.err"; rc=$?
	ok $rc "$label: ... the mutant said where, the check caught it ('$says')"
	[ $rc -eq 0 ] || tail -5 "$out-bad.err" | sed 's/^/# /'
}

B=$BUILD/bin
X=${IBC_TEST_XPORT:-shm}

case_run "alltoall de" bytes de hrwg de:10:0:1 "wrong bytes" \
	"$B/ibchar-alltoall" --xport $X --ranks 2 --sizes 4096 --iters 40 --warmup 5 --no-model \
	--variants de,hrwg --quiet
case_run "barrier rds" order rds pe rds:20:1 "barrier validate: rank 1 left barrier 19" \
	"$B/ibchar-barrier" --xport $X --ranks 3 --iters 100 --warmup 5 --variants rds,pe --quiet

# link: a write in the middle of a stream, rank 1's answer of a ping-pong
L="$B/ibchar-link --xport $X --ranks 2 --sizes 13,4096 --iters 40 --warmup 5 --quiet"
case_run "link write-bw-stream" bytes write-bw-stream write-lat write-bw-stream:20 "wrong bytes" \
	$L --variants write-bw-stream,write-lat
case_run "link write-lat-lastbyte" bytes write-lat-lastbyte read-lat write-lat-lastbyte:20:1 \
	"write-lat-lastbyte rank 0: 1 wrong bytes" $L --variants write-lat-lastbyte,read-lat

# logp: message 8 of PRTT's 16, the write of an o_s kernel (whose receivers
# do not wait for it in the run), into user memory too (from rank 0, and
# from every rank at once), the block copy-peer
# copies out, a message through the receive pool, a block the readout
# kernel copies out after its round trip (its flag in the block, or a line
# of its own); a 1-byte message is the
# pattern's byte
G="$B/ibchar-logp --xport $X --ranks 3 --fanin 2 --sizes 1,4096 --iters 40 --warmup 5 --quiet"
case_run "logp loggp-prttn" bytes loggp-prttn rtt-send-n1 loggp-prttn:20 \
	"message 8 from rank 0 in iteration 20" $G --variants loggp-prttn,rtt-send-n1
case_run "logp os-write" bytes os-write rtt-write-1n os-write:20 "os-write rank 2: 1 wrong bytes" \
	$G --variants os-write,rtt-write-1n
case_run "logp copy-peer" bytes copy-peer copy copy-peer:20:1 "copy-peer rank 0: 1 wrong bytes" \
	$G --variants copy-peer,copy
case_run "logp copy-peer-flag" bytes copy-peer-flag copy copy-peer-flag:20:1 \
	"copy-peer-flag rank 0: 1 wrong bytes" $G --variants copy-peer-flag,copy
# copy-peer alone: each call right after its last (nothing else in its round),
# checked and not (unchecked, rank 0 clears the flag in the run itself);
# rank 1's next block waits for rank 0 to give its slot back, where it once
# raced rank 0's clearing of the flag and hung (2 ranks: in window mode,
# where nothing lines the ranks up between the calls); copy-peer-flag the
# same, its rank 0 waiting for the flag line
for k in copy-peer copy-peer-flag; do
	for v in --validate --no-validate; do
		out=$tmp/$k-alone$v
		timeout 120 $B/ibchar-logp --xport $X --ranks 2 --sizes 1,4096 --iters 400 \
			--warmup 5 --quiet --variants $k $(echo $v | sed 's/--no-validate//') \
			--budget 0 --out "$out" >/dev/null 2>"$out.err"; rc=$?
		[ $rc -eq 0 ] && [ "$(rows "$out" $k "")" -eq 2 ] &&
			{ [ $v != --validate ] || [ "$(rows "$out" $k "valid=1;checked=bytes")" -eq 2 ]; }
		ok $? "logp $k alone, $v: exit 0, both rows written (exit $rc)"
		[ $rc -eq 0 ] || tail -3 "$out.err" | sed 's/^/# /'
	done
done
case_run "logp os-write-user" bytes os-write-user os-write os-write-user:20 \
	"os-write-user rank 2: 1 wrong bytes" $G --variants os-write-user,os-write
# every rank writes (os-write-user-all): rank 1's message to rank 0
case_run "logp os-write-user-all" bytes os-write-user-all os-write-user os-write-user-all:20:1 \
	"os-write-user-all rank 0: 1 wrong bytes" $G --variants os-write-user-all,os-write-user
case_run "logp rtt-pool-1n" bytes rtt-pool-1n rtt-send-1n rtt-pool-1n:20 \
	"rtt-pool-1n rank 2: 1 wrong bytes" $G --variants rtt-pool-1n,rtt-send-1n
# the datagram from rank 0, corrupted, is rank 1's to find; rtt-mcast
# rotates over 8 sets of slots too (rank 1's receive, rank 0's flag)
case_run "logp rtt-mcast" bytes rtt-mcast rtt-write-1n rtt-mcast:21 \
	"rtt-mcast rank 1: 1 wrong bytes" $G --variants rtt-mcast,rtt-write-1n
nsets=$(rows "$tmp/logp-rtt-mcast-ok" rtt-mcast "sets=8")
[ "$nsets" -gt 0 ] && [ "$nsets" -eq "$(rows "$tmp/logp-rtt-mcast-ok" rtt-mcast "")" ]
ok $? "logp rtt-mcast: its $nsets rows say sets=8"
# the write round trips rotate over 8 sets of slots, one call each in turn:
# a message corrupted in two iterations of different sets (21 and 22), from
# rank 0 and from its peer's answer; every row of them says sets=8
case_run "logp rtt-write-1n" bytes rtt-write-1n rtt-send-1n rtt-write-1n:21 \
	"rtt-write-1n rank 2: 1 wrong bytes" $G --variants rtt-write-1n,rtt-send-1n
case_run "logp rtt-write-n1" bytes rtt-write-n1 rtt-send-n1 rtt-write-n1:22:1 \
	"rtt-write-n1 rank 0: 1 wrong bytes" $G --variants rtt-write-n1,rtt-send-n1
nsets=$(rows "$tmp/logp-rtt-write-1n-ok" rtt-write-1n "sets=8")
[ "$nsets" -gt 0 ] && [ "$nsets" -eq "$(rows "$tmp/logp-rtt-write-1n-ok" rtt-write-1n "")" ] &&
	[ "$(rows "$tmp/logp-rtt-write-1n-ok" rtt-send-1n "sets=8")" -eq 0 ]
ok $? "logp rtt-write-1n: its $nsets rows say sets=8, rtt-send-1n's do not"
# the exchange of writes: every pair at once (N = 4: 0 and 1, 2 and 3), its
# sets turning; rank 3's message to rank 2, corrupted, is rank 2's to find
case_run "logp xchg-write" bytes xchg-write rtt-write-1n xchg-write:21:3 \
	"xchg-write rank 2: 1 wrong bytes" "$B/ibchar-logp" --xport $X --ranks 4 --fanin 1 \
	--sizes 1,4096 --iters 40 --warmup 5 --quiet --variants xchg-write,rtt-write-1n
nsets=$(rows "$tmp/logp-xchg-write-ok" xchg-write "sets=8")
[ "$nsets" -gt 0 ] && [ "$nsets" -eq "$(rows "$tmp/logp-xchg-write-ok" xchg-write "pairs=2")" ] &&
	[ "$nsets" -eq "$(rows "$tmp/logp-xchg-write-ok" xchg-write "")" ]
ok $? "logp xchg-write: its $nsets rows say sets=8 and pairs=2"
# HRWG's step: every pair writes each other a block, then its flag on a line
# of its own, and copies the block out; rank 1's block to rank 0, corrupted,
# is rank 0's to find; the flag lines turn over the sets with the blocks
case_run "logp xchg-write-readout-flag" bytes xchg-write-readout-flag xchg-write \
	xchg-write-readout-flag:21:1 "xchg-write-readout-flag rank 0: 1 wrong bytes" \
	"$B/ibchar-logp" --xport $X --ranks 4 --fanin 1 --sizes 1,4096 --iters 40 --warmup 5 \
	--quiet --variants xchg-write-readout-flag,xchg-write
d=$tmp/logp-xchg-write-readout-flag-ok
nx=$(rows "$d" xchg-write-readout-flag "pairs=2;readout=1;flag=own-line;sets=8")
[ "$nx" -gt 0 ] && [ "$nx" -eq "$(rows "$d" xchg-write-readout-flag "")" ]
ok $? "logp xchg-write-readout-flag: its $nx rows say pairs=2, readout=1, flag=own-line, sets=8"
# the exchange of sends through the receive pool: rank 2's message to rank
# 3, corrupted, is rank 3's to find
case_run "logp xchg-pool" bytes xchg-pool rtt-pool-1n xchg-pool:21:2 \
	"xchg-pool rank 3: 1 wrong bytes" "$B/ibchar-logp" --xport $X --ranks 4 --fanin 1 \
	--sizes 1,4096 --iters 40 --warmup 5 --quiet --variants xchg-pool,rtt-pool-1n
case_run "logp rtt-write-readout-1n" bytes rtt-write-readout-1n rtt-write-1n \
	rtt-write-readout-1n:20 "rtt-write-readout-1n rank 2: 1 wrong bytes" \
	$G --variants rtt-write-readout-1n,rtt-write-1n

case_run "logp rtt-write-readout-flag-1n" bytes rtt-write-readout-flag-1n rtt-write-readout-1n \
	rtt-write-readout-flag-1n:20 "rtt-write-readout-flag-1n rank 2: 1 wrong bytes" \
	$G --variants rtt-write-readout-flag-1n,rtt-write-readout-1n
# the channel: a message in the middle of a -bibw window from rank 1, of a
# -bw window, of rdma-write-bw's slots; bytes sizes with a partial word
C="$B/ibchar-channel --xport $X --ranks 2 --sizes 13,65536 --iters 40 --warmup 5 --quiet"
case_run "channel piggyback-bibw" bytes piggyback-bibw basic piggyback-bibw:20:1 "wrong bytes" \
	$C --variants piggyback-bibw,basic
case_run "channel zcopy-bw" bytes zcopy-bw pipeline zcopy-bw:20 "message 32 of iteration 20" \
	$C --variants zcopy-bw,pipeline
case_run "channel rdma-write-bw" bytes rdma-write-bw rdma-write rdma-write-bw:20 "wrong bytes" \
	$C --variants rdma-write-bw,rdma-write

# the host MPI's variants, checked the same way (bench/*/mpi.c)
if [ -x "$B/ibchar-channel-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	M="mpirun.openmpi --oversubscribe -x IBC_CORRUPT"
	case_run "channel mpi-bw" bytes mpi-bw mpi mpi-bw:20 "message 32 of iteration 20" \
		$M -n 2 "$B/ibchar-channel-openmpi" --xport $X --sizes 13,65536 --iters 40 \
		--warmup 5 --variants mpi-bw,mpi --quiet
	case_run "alltoall mpi" bytes mpi mpi-pairwise mpi:10:2:1 "wrong bytes" \
		$M -n 3 "$B/ibchar-alltoall-openmpi" --xport $X --sizes 4096 --iters 40 --warmup 5 \
		--no-model --variants mpi,mpi-pairwise --quiet
else
	for i in 1 2 3 4 5 6 7 8; do ok 0 "# SKIP no Open MPI build"; done
fi
