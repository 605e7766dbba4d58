#!/bin/bash
# tests/rxe/alltoall-suite-verbs.t - the all-to-all suite on the verbs
# transport in one Soft-RoCE guest: N = 2 and 4, every variant with
# --validate, and the model's rows (at an N above the guest's PUs, none:
# "not modelled (oversubscribed" instead) (make check-rxe).  IBC_RXE_RESULTS=DIR
# keeps the results directory.
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
B=$BUILD/bin/ibchar-alltoall
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$B" ] || tap_skip_all "$B not built"
tap_plan 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 2 4; do
	rc=0
	timeout 300 "$B" --xport verbs --ranks $n --sizes 8,4096,65536 --iters 100 --warmup 10 \
		--budget 10 --validate --out "$out" -q >"$out/log" 2>&1 || rc=$?
	tap_ok "$rc" "ibchar-alltoall --xport verbs --ranks $n --validate" "$out/log"
	bad=0
	for v in $("$B" --list); do
		[ "$v" = hypercube ] && [ $n = 3 ] && continue
		grep ",alltoall,$v,ibchar,verbs,.*,$n,.*valid=1" "$out/results.csv" >/dev/null 2>&1 ||
			{ echo "# N = $n: no validated row of $v"; bad=1; }
	done
	if [ "$(nproc)" -ge $n ]; then
		grep -q ",alltoall,de,model,verbs,.*,$n," "$out/results.csv" || { echo "# N = $n: no model rows"; bad=1; }
		what="the model's rows"
	else
		! grep -q ",alltoall,[a-z-]*,model,verbs,.*,$n," "$out/results.csv" &&
			grep -q "N = $n: not modelled (oversubscribed" "$out/log" ||
			{ echo "# N = $n on $(nproc) PUs: model rows, or no \"not modelled\""; bad=1; }
		what="no model rows ($(nproc) PUs: oversubscribed)"
	fi
	tap_ok "$bad" "... every variant validated on verbs at N = $n, and $what"
done
[ -n "${IBC_RXE_RESULTS:-}" ] && cp "$out"/*.csv "$IBC_RXE_RESULTS/" 2>/dev/null
exit $((TAP_FAILED > 0))
