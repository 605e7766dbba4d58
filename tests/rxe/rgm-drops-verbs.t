#!/bin/bash
# tests/rxe/rgm-drops-verbs.t - RGM's NAK/retransmit reliability on verbs with
# release datagrams discarded by their receivers (tests/barrier/rgm-drops.t,
# lighter for TCG: N = 3, 300 barriers per case).  Skips where no RDMA device
# has an active port (plain make check).
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
export IBC_TEST_XPORT=verbs
export IBC_TEST_RGM_RANKS=${IBC_TEST_RGM_RANKS:-3}
export IBC_TEST_RGM_ITERS=${IBC_TEST_RGM_ITERS:-300}
exec sh "$(dirname "$0")/../barrier/rgm-drops.t"
