#!/bin/sh
# `ibchar run` over several suites and rank counts: a rank count a suite
# cannot run is skipped for that suite with a note, the others go on; --mpi
# picks the launcher that can start the -<mpi> build, and refuses one that
# cannot (exit 2, saying what to add); the summary pivots swept suites.
. "$(dirname "$0")/../lib/tap.sh"
IBCHAR=$BUILD/bin/ibchar
tap_need "$BUILD/bin/ibchar"
tap_tmp sweep
echo "1..9"

timeout 120 "$IBCHAR" run link barrier --ranks 2,4 --sizes 8 --variants write-lat,rds \
	--iters 100 --xport shm --out "$tmp/a" >"$tmp/sum" 2>"$tmp/err"; rc=$?
ok $rc "ibchar run link barrier --ranks 2,4 exits 0"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -10
grep -q 'link runs on 2 ranks: N = 4 skipped' "$tmp/err"; ok $? "... link's N = 4 is skipped with a note"
c=$(awk -F, 'NR > 1 && $2 == "link" { print $9 }' "$tmp/a/results.csv" | sort -u | tr '\n' ' ')
[ "$c" = "2 " ]; ok $? "... link rows at N = 2 only ($c)"
c=$(awk -F, 'NR > 1 && $2 == "barrier" { print $9 }' "$tmp/a/results.csv" | sort -u | tr '\n' ' ')
[ "$c" = "2 4 " ]; ok $? "... barrier rows at N = 2 and 4 after it ($c)"
grep -q 'barrier: median (p50_us, slowest rank per iteration) by variant x ranks' "$tmp/sum" &&
	grep -Eq '^link +write-lat ' "$tmp/sum"
ok $? "... the summary pivots barrier (swept) and lists link (one N)"

"$IBCHAR" run barrier --mpi openmpi --launcher fork --ranks 2 --out "$tmp/b" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- '--launcher mpirun' "$tmp/err"
ok $? "--mpi openmpi with --launcher fork exits 2 and says what to add (got $rc)"

if [ -x "$BUILD/bin/ibchar-barrier-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	timeout 120 "$IBCHAR" run barrier --mpi openmpi --ranks 2 --variants rds,mpi --iters 200 \
		--xport shm --out "$tmp/c" >"$tmp/sum" 2>"$tmp/err"; rc=$?
	ok $rc "--mpi openmpi alone runs the Open MPI build under mpirun"
	[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -10
	grep -q ',barrier,mpi,openmpi,' "$tmp/c/results.csv" 2>/dev/null &&
		grep -q ',mpirun,' "$tmp/c/results.csv"
	ok $? "... with impl=openmpi rows, launcher mpirun"
	grep -q 'factor_vs_mpi=' "$tmp/c/results.csv"; ok $? "... and factor_vs_mpi on the rows"
else
	echo "ok 7 # SKIP no Open MPI build"; echo "ok 8 # SKIP no Open MPI build"; echo "ok 9 # SKIP no Open MPI build"
fi
