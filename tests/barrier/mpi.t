#!/bin/sh
# The Open MPI build of the barrier bench under mpirun.openmpi: every variant
# (ibchar's over shm and mpi, mpi-pe, mpi-ds) in one run, validated, with the
# factors vs the MPI variants in extra and the MPI version in meta.csv.
BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
BIN=$BUILD/bin/ibchar-barrier-openmpi
if [ ! -x "$BIN" ]; then
	echo "1..0 # SKIP $BIN not built (no Open MPI found at build time)"
	exit 0
fi
if ! command -v mpirun.openmpi >/dev/null 2>&1; then
	echo "1..0 # SKIP mpirun.openmpi not on PATH"
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
tmp=$(mktemp -d /tmp/ibc-bmpi-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "1..14"

variants=$("$BIN" --list 2>/dev/null | tr '\n' ' ')
echo "$variants" | grep -q 'mpi-pe' && echo "$variants" | grep -q 'rds'
ok $? "--list names ibchar's and the MPI variants ($variants)"

"$BIN" --variants nosuch >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown variant 'nosuch'" "$tmp/err"; ok $? "an unknown variant exits 2 with a message"

for N in 2 4; do
	out=$tmp/r$N
	timeout 50 mpirun.openmpi --oversubscribe -n $N "$BIN" --xport shm --validate --iters 200 \
		--warmup 20 --out "$out" >"$tmp/out$N" 2>"$tmp/err$N"; rc=$?
	ok $rc "mpirun.openmpi -n $N ibchar-barrier-openmpi --validate exits 0"
	[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err$N" | tail -20
	missing=
	for v in $variants; do
		c=$(awk -F, -v v="$v" -v N="$N" 'NR > 1 && $3 == v && $9 == N && $15 + 0 > 0 && $NF ~ /valid=1/ { c++ } END { print c + 0 }' "$out/results.csv" 2>/dev/null)
		[ "$c" -ge 1 ] || missing="$missing $v"
	done
	[ -z "$missing" ]; ok $? "N=$N: a valid row with a positive median for every variant${missing:+ (missing:$missing)}"
	c=$(awk -F, 'NR > 1 && ($3 == "mpi" || $3 == "mpi-pe" || $3 == "mpi-ds") && $4 == "openmpi" { c++ } END { print c + 0 }' "$out/results.csv" 2>/dev/null)
	[ "$c" -eq 3 ]; ok $? "N=$N: mpi, mpi-pe, mpi-ds rows have impl=openmpi ($c)"
	c=$(awk -F, 'NR > 1 && $NF ~ /factor_vs_mpi_pe=[0-9.]+/ && $NF ~ /factor_vs_mpi_ds=/ && $NF ~ /factor_vs_mpi=/ { c++ } END { print c + 0 }' "$out/results.csv" 2>/dev/null)
	t=$(awk 'END { print NR - 1 }' "$out/results.csv" 2>/dev/null)
	[ "$c" -ge 1 ] && [ "$c" -eq "$t" ]; ok $? "N=$N: every row has factor_vs_mpi_pe/_ds/mpi ($c of $t)"
	grep -q '^mpi_version,.*Open MPI' "$out/meta.csv" 2>/dev/null; ok $? "N=$N: meta.csv records the Open MPI version"
done
# the RGM row at N=4 carries its counters beside the factors
grep -q ',rgm,ibchar,.*paper_us=.*naks=' "$tmp/r4/results.csv" 2>/dev/null
ok $? "N=4: RGM rows keep paper_us and the reliability counters"
grep -q ',mpi-ds,openmpi,.*paper_us=' "$tmp/r4/results.csv" 2>/dev/null
ok $? "N=4: MPI rows also carry the paper's figure (paper_us)"
