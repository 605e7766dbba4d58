#!/usr/bin/env bash
# `make run`: the default suites into results/<UTC timestamp>/, then the plots
# for what was measured; `ibchar run` prints the summary tables on stdout.
#
#   barrier  on the default transport (--xport auto), with the host-MPI
#            comparison in the same run: the -openmpi build under
#            mpirun.openmpi (ranks exceed the cores here and only Open MPI
#            yields; MPICH busy-polls), N = 2..16; without an Open MPI build,
#            the plain bench under the local launcher
#   alltoall a short sweep (N = 2, 4; 1 B .. 128 KiB per pair, --validate),
#            beside MPI_Alltoall when the Open MPI build is there
#   probe    the placement probe (the figures are also read relative to it)
#
# then the figures (ibchar plot) and the report (ibchar report: report.html).
#
# IBC_RUN_OUT sets the results directory.  IBC_RUN_RANKS, IBC_RUN_ITERS,
# IBC_RUN_BUDGET override the sweep (defaults
# keep the whole run at a few minutes on a 2-vCPU machine); IBC_RUN_ARGS is
# added to every `ibchar run`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${IBC_BUILD:-$PWD/build}
IBCHAR=$BUILD/bin/ibchar
ranks=${IBC_RUN_RANKS:-2..16}
iters=${IBC_RUN_ITERS:-2000}
budget=${IBC_RUN_BUDGET:-10}
out=${IBC_RUN_OUT:-results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
echo "ibchar: results go to $out" >&2

status=0
if [ -x "$BUILD/bin/ibchar-barrier-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
	barrier_launch=(--launcher mpirun --mpi openmpi)
else
	echo "ibchar: no Open MPI build of the barrier bench; barrier without the host-MPI comparison" >&2
	barrier_launch=()
fi
# shellcheck disable=SC2086
"$IBCHAR" run barrier --out "$out" --ranks "$ranks" --iters "$iters" --budget "$budget" \
	"${barrier_launch[@]}" ${IBC_RUN_ARGS:-} || status=$?
if [ -x "$BUILD/bin/ibchar-alltoall-openmpi" ] && [ ${#barrier_launch[@]} -gt 0 ]; then
	a2a_launch=(--launcher mpirun --mpi openmpi)
else
	a2a_launch=()
fi
# shellcheck disable=SC2086
"$IBCHAR" run alltoall --out "$out" --ranks "${IBC_RUN_A2A_RANKS:-2,4}" \
	--sizes 1,32,4096,131072 --iters "${IBC_RUN_A2A_ITERS:-300}" --budget "$budget" --validate \
	"${a2a_launch[@]}" ${IBC_RUN_ARGS:-} || status=$?
# shellcheck disable=SC2086
"$IBCHAR" run probe --out "$out" ${IBC_RUN_ARGS:-} || status=$?

if "$IBCHAR" plot --help >/dev/null 2>&1; then
	"$IBCHAR" plot "$out" || status=$?
fi
# the report of this run: one HTML page with the figures, tables and provenance
"$IBCHAR" report --no-plot "$out" >/dev/null || status=$?
echo "ibchar: done; see $out/report.html ($out/results.csv, $out/meta.csv)" >&2
exit $status
