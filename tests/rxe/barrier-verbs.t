#!/bin/bash
# tests/rxe/barrier-verbs.t - the barrier test (tests/barrier/barrier.c) on the
# verbs transport: every variant at N = 2..8 with --validate-style checks
# (make check-rxe, one Soft-RoCE guest).  Light settings so it stays within a
# few minutes under TCG; override with IBC_TEST_BARRIER_NMAX / _ITERS /
# _BUDGET.  Skips where no RDMA device has an active port (plain make check).
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
T=$BUILD/tests/barrier/barrier.t
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$T" ] || tap_skip_all "$T not built"
export IBC_TEST_XPORT=verbs
export IBC_TEST_BARRIER_NMAX=${IBC_TEST_BARRIER_NMAX:-8}
export IBC_TEST_BARRIER_ITERS=${IBC_TEST_BARRIER_ITERS:-200}
export IBC_TEST_BARRIER_BUDGET=${IBC_TEST_BARRIER_BUDGET:-1}
exec "$T"
