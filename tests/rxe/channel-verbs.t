#!/bin/bash
# tests/rxe/channel-verbs.t - the channel test (tests/channel/channel.c) on
# the verbs transport in one Soft-RoCE guest: every design, both directions,
# random splits, a stalled receiver, the ring to the brim, the wrap at every
# offset, the head-before-data mutant (make check-rxe).  Override the bytes
# per case with IBC_TEST_CHANNEL_BYTES.
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
T=$BUILD/tests/channel/channel.t
[ -n "$(rdma_active_dev)" ] || tap_skip_all "no RDMA device with an active port"
[ -x "$T" ] || tap_skip_all "$T not built"
export IBC_TEST_XPORT=verbs
export IBC_TEST_CHANNEL_BYTES=${IBC_TEST_CHANNEL_BYTES:-262144}
exec "$T"
