#!/bin/bash
# tests/rxe/device.t - an RDMA device is usable: a port is active and RC and
# UD ping-pong work over it in loopback (server and client on this node).
# Skips when there is no RDMA device (the host of plain `make check`); in
# `make check-rxe` it runs in a Soft-RoCE guest (scripts/softroce-vm).
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

command -v ibv_devinfo >/dev/null || tap_skip_all "ibv_devinfo not installed"
dev=$(rdma_active_dev)
[ -n "$dev" ] || tap_skip_all "no RDMA device with an active port"

tap_plan 5
log=$(mktemp)
trap 'rm -f "$log"' EXIT

ibv_devinfo -d "$dev" >"$log" 2>&1
grep -q 'PORT_ACTIVE' "$log"
tap_ok $? "ibv_devinfo: $dev has an active port" "$log"

# in the Soft-RoCE guest the device must be the rxe0 that softroce-vm made
if [ -n "${IBC_VM_NODE:-}" ]; then
	[ "$dev" = rxe0 ] && grep -q 'link_layer:.*Ethernet' "$log"
	tap_ok $? "guest device is rxe0 over Ethernet (found $dev)" "$log"
	[ -n "${IBC_VM_HOST_CPU:-}" ]
	tap_ok $? "the guest knows its host's CPU (IBC_VM_HOST_CPU: ${IBC_VM_HOST_CPU:-unset}), for meta.csv" "$log"
else
	tap_skip "guest device is rxe0" "not in a softroce-vm guest"
	tap_skip "the guest knows its host's CPU" "not in a softroce-vm guest"
fi

gid=$(rdma_gid_index "$dev")
# port from the PID so concurrent runs on one host do not collide
port=$((20000 + $$ % 20000))

# pingpong PROG ARGS...: starts the server, waits for its port, runs the client
pingpong() {
	local prog=$1
	shift
	timeout 60 "$prog" -d "$dev" -g "$gid" -p "$port" "$@" >"$log.srv" 2>&1 &
	local srv=$! rc=0 src=0
	wait_tcp_port "$port" 20 "$srv" || true
	timeout 60 "$prog" -d "$dev" -g "$gid" -p "$port" "$@" localhost >"$log" 2>&1 || rc=$?
	wait "$srv" || src=$?
	[ "$rc" = 0 ] && rc=$src
	cat "$log.srv" >>"$log"
	rm -f "$log.srv"
	return "$rc"
}

pingpong ibv_rc_pingpong -n 200 -s 4096 -c
tap_ok $? "ibv_rc_pingpong loopback on $dev (gid $gid, 200 x 4 KiB, data checked)" "$log"
port=$((port + 1))
pingpong ibv_ud_pingpong -n 200 -s 512 -c
tap_ok $? "ibv_ud_pingpong loopback on $dev (gid $gid, 200 x 512 B, data checked)" "$log"
