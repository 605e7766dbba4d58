#!/bin/bash
# tests/rxe/alltoall-verbs.t - the all-to-all test (tests/alltoall/alltoall.c)
# on the verbs transport: every algorithm at p = 2..8, back to back with
# random delays, every byte checked, and the HRWG mutants (make check-rxe,
# one Soft-RoCE guest).  Light settings for TCG; override with
# IBC_TEST_A2A_NMAX / _CALLS / _MAXSIZE.  Skips without an active RDMA port.
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
T=$BUILD/tests/alltoall/alltoall.t
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$T" ] || tap_skip_all "$T not built"
export IBC_TEST_XPORT=verbs
export IBC_TEST_A2A_NMAX=${IBC_TEST_A2A_NMAX:-8}
export IBC_TEST_A2A_CALLS=${IBC_TEST_A2A_CALLS:-4}
export IBC_TEST_A2A_MAXSIZE=${IBC_TEST_A2A_MAXSIZE:-131072}
exec "$T"
