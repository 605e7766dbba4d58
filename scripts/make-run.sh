#!/usr/bin/env bash
# `make run`: the default suites into results/<UTC timestamp>/, then the plots
# for what was measured, then the summary table (printed by `ibchar run`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${IBC_BUILD:-$PWD/build}
out=results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "ibchar: results go to $out" >&2
"$BUILD/bin/ibchar" run --out "$out" ${IBC_RUN_ARGS:-}
if "$BUILD/bin/ibchar" plot --help >/dev/null 2>&1; then
	"$BUILD/bin/ibchar" plot "$out"
fi
echo "ibchar: done; see $out/results.csv, $out/meta.csv" >&2
