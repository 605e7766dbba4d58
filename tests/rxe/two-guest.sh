#!/bin/bash
# tests/rxe/two-guest.sh - cross-node checks, run on both Soft-RoCE guests
# at once by scripts/check-rxe.sh:
#   guest 1: IBC_RXE_NODE=1 IBC_RXE_PEER=10.0.0.2  -> client side, prints TAP
#   guest 2: IBC_RXE_NODE=2 IBC_RXE_PEER=10.0.0.1  -> server side, logs only
#
# Adding a check: write check_<name> taking the role (server|client) as $1,
# add <name> to CHECKS.  Both nodes run the checks in the same order; the
# server side must exit by itself (use `timeout`), the client side retries
# its connection while the server is not up yet (retry_connect) and its exit
# status is the TAP result.  Use a port of your own (PORT_BASE + index) so
# a late server never serves the next check's client.  $IBC_BUILD holds the
# build (binaries: $IBC_BUILD/bin, C tests: $IBC_BUILD/tests).
# IBC_RXE_CHECKS="name ..." (the same on both nodes) runs only those checks.
# A failed check is followed by the link's state (link_state: whether the
# peer answers a TCP connect, its neighbour entry, eth0's counters, the
# kernel's last rxe/net lines), so a run that failed once says whether the
# guests could still reach each other.
# shellcheck disable=SC2317  # the check_* functions are called by name
# shellcheck source=tests/rxe/lib.sh
. "$(dirname "$0")/lib.sh"

NODE=${IBC_RXE_NODE:?IBC_RXE_NODE must be 1 or 2}
PEER=${IBC_RXE_PEER:?IBC_RXE_PEER must be the other node address}
PORT_BASE=${IBC_RXE_PORT_BASE:-19000}
SERVER_TIMEOUT=${IBC_RXE_SERVER_TIMEOUT:-120}  # a server gives up after this
CONNECT_WINDOW=${IBC_RXE_CONNECT_WINDOW:-90}  # a client retries this long

CHECKS=(rc_pingpong ud_pingpong rping write_lat)

dev=$(rdma_active_dev)
gid=${dev:+$(rdma_gid_index "$dev")}

# --- the checks ---------------------------------------------------------
check_rc_pingpong() { # RC send/recv with data check, 4 KiB x 500
	local port=$((PORT_BASE + 1))
	if [ "$1" = server ]; then
		timeout "$SERVER_TIMEOUT" ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -n 500 -s 4096 -c
	else
		retry_connect "$CONNECT_WINDOW" timeout 60 \
			ibv_rc_pingpong -d "$dev" -g "$gid" -p "$port" -n 500 -s 4096 -c "$PEER"
	fi
}

check_ud_pingpong() { # UD send/recv with data check, 512 B x 500
	local port=$((PORT_BASE + 2))
	if [ "$1" = server ]; then
		timeout "$SERVER_TIMEOUT" ibv_ud_pingpong -d "$dev" -g "$gid" -p "$port" -n 500 -s 512 -c
	else
		retry_connect "$CONNECT_WINDOW" timeout 60 \
			ibv_ud_pingpong -d "$dev" -g "$gid" -p "$port" -n 500 -s 512 -c "$PEER"
	fi
}

check_rping() { # librdmacm connection + RDMA read/write, data validated
	local port=$((PORT_BASE + 3))
	if [ "$1" = server ]; then
		timeout "$SERVER_TIMEOUT" rping -s -a "$IBC_VM_IP" -p "$port" -C 20 -V -S 4096
	else
		retry_connect "$CONNECT_WINDOW" timeout 60 rping -c -a "$PEER" -p "$port" -C 20 -V -S 4096
	fi
}

check_write_lat() { # perftest reference tool: RDMA write latency
	local port=$((PORT_BASE + 4))
	if [ "$1" = server ]; then
		timeout "$SERVER_TIMEOUT" ib_write_lat -d "$dev" -x "$gid" -p "$port" -n 200 -s 8
	else
		retry_connect "$CONNECT_WINDOW" timeout 60 \
			ib_write_lat -d "$dev" -x "$gid" -p "$port" -n 200 -s 8 "$PEER"
	fi
}

# verbs backend across the guests (tests/xport/twonode.c): the tcp bootstrap
# wires rank 0 = node 1 (listens on 10.0.0.1) and rank 1 = node 2 (connects,
# retrying while rank 0 is not up); both sides run the same TAP checks.
CHECKS+=(xport_twonode)
check_xport_twonode() {
	local port=$((PORT_BASE + 20)) rank=0
	[ "$1" = server ] && rank=1
	IBC_BOOT=tcp IBC_BOOT_RANK=$rank IBC_BOOT_SIZE=2 IBC_BOOT_ROOT=10.0.0.1:$port \
		IBC_BOOT_TIMEOUT=$CONNECT_WINDOW \
		timeout "$SERVER_TIMEOUT" "$IBC_BUILD/tests/xport/twonode.t"
}

# A suite's bench across the guests at N = 2 (rank 0 on node 1, rank 1 on
# node 2, tcp bootstrap), every variant, --validate; rank 0 (node 1) checks
# that each variant wrote a validated row.  $1 role, $2 suite, $3 port
# offset, the rest: the bench's options.  $variants (comma-separated, may be
# empty: all) picks the variants.  Leaves the results in $out.
suite_n2() {
	local role=$1 suite=$2 port=$((PORT_BASE + $3)) rank=0 v rc=0 list
	shift 3
	[ "$role" = server ] && rank=1
	out=$(mktemp -d)
	IBC_BOOT=tcp IBC_BOOT_RANK=$rank IBC_BOOT_SIZE=2 IBC_BOOT_ROOT=10.0.0.1:$port \
		IBC_BOOT_TIMEOUT=$CONNECT_WINDOW \
		timeout "$SERVER_TIMEOUT" "$IBC_BUILD/bin/ibchar-$suite" --xport verbs --ranks 2 \
		--validate --out "$out" ${variants:+--variants "$variants"} "$@" || rc=$?
	if [ -n "${variants:-}" ]; then
		list=${variants//,/ }
	else
		list=$("$IBC_BUILD/bin/ibchar-$suite" --list)
	fi
	if [ "$rc" = 0 ] && [ "$rank" = 0 ]; then
		for v in $list; do
			grep ",$suite,$v,ibchar," "$out/results.csv" 2>/dev/null | grep -q 'valid=1' &&
				continue
			echo "two-guest.sh: $suite: no validated row for variant $v in $out/results.csv"
			rc=1
		done
	fi
	# IBC_RXE_RESULTS=DIR (a directory the guests can write): keep the rows
	[ -n "${IBC_RXE_RESULTS:-}" ] && cp "$out/results.csv" "$IBC_RXE_RESULTS/$suite-n2-node$NODE.csv" 2>/dev/null
	return "$rc"
}

# the barrier suite (across hosts --validate is the remote check: each rank
# reads the other's entry counter after every barrier)
CHECKS+=(barrier_n2)
check_barrier_n2() {
	local rc=0
	suite_n2 "$1" barrier 21 --iters 300 --warmup 30 --budget 10 || rc=$?
	rm -rf "$out"
	return "$rc"
}

# the all-to-all suite (every byte checked at both ranks), and its model
CHECKS+=(alltoall_n2)
check_alltoall_n2() {
	# every variant with its model at 64 KiB across two TCG guests: 120 s was
	# not always enough on a loaded machine (a CI run timed out once)
	local rc=0 SERVER_TIMEOUT=$((SERVER_TIMEOUT * 2))
	suite_n2 "$1" alltoall 22 --sizes 8,4096,65536 --iters 100 --warmup 10 --budget 10 || rc=$?
	if [ "$rc" = 0 ] && [ "$1" = client ]; then
		grep -q ',alltoall,de,model,' "$out/results.csv" ||
			{ echo "two-guest.sh: alltoall_n2: no model rows"; rc=1; }
	fi
	rm -rf "$out"
	return "$rc"
}

# the channel suite across the guests (each ring in the other guest's memory),
# and the connection table's row measured on 2 nodes x 1 core
CHECKS+=(channel_n2)
check_channel_n2() {
	local rc=0 variants=basic,piggyback,pipeline,zcopy,rdma-write,piggyback-bw,zcopy-bw
	# a few variants: across two TCG guests every window of 64 KiB messages is slow
	suite_n2 "$1" channel 23 --sizes 8,4096 --iters 50 --warmup 5 --budget 3 || rc=$?
	if [ "$rc" = 0 ] && [ "$1" = client ]; then
		grep -Eq '^measured,verbs,2,1,2,rc-ondemand,[1-9]' "$out/channel-conn.csv" ||
			{ echo "two-guest.sh: channel_n2: no measured 2 x 1 row in channel-conn.csv"; rc=1; }
		[ -n "${IBC_RXE_RESULTS:-}" ] && cp "$out/channel-conn.csv" "$IBC_RXE_RESULTS/" 2>/dev/null
	fi
	rm -rf "$out"
	return "$rc"
}

# --- driver -------------------------------------------------------------
# the link's state after a failed check: can this guest still reach the peer?
link_state() {
	local e rc=0
	# a TCP connect to a port nobody listens on: "refused" means the peer
	# answered (no ping here: the guests run the host's tools)
	e=$(timeout 5 bash -c "exec 3<>/dev/tcp/$PEER/9" 2>&1) || rc=$?
	e=$(tail -n 1 <<<"$e")
	if [ "$rc" = 124 ]; then echo "link: $PEER does not answer: no reply to a connect within 5 s"
	elif [ "$rc" = 0 ] || [[ $e == *refused* ]]; then echo "link: $PEER answers (a connect to its port 9: ${e:-accepted})"
	else echo "link: $PEER does not answer: $e"
	fi
	echo "link: neighbour: $(ip neigh show "$PEER" 2>&1 | head -n 1)"
	local f st=/sys/class/net/eth0 line="link: eth0"
	for f in rx_packets rx_dropped tx_packets tx_dropped tx_errors; do
		line+=" $f=$(cat "$st/statistics/$f" 2>/dev/null)"
	done
	echo "$line"
	dmesg 2>/dev/null | grep -Ei 'rxe|virtio|eth0|timeout|oops|bug:|hung|out of memory|killed process|segfault' | grep -v "speed is unknown" | tail -n 5 | sed 's/^/link: kernel: /'
	return 0
}

if [ -n "${IBC_RXE_CHECKS:-}" ]; then
	read -r -a CHECKS <<<"$IBC_RXE_CHECKS"
	for c in "${CHECKS[@]}"; do
		declare -F "check_$c" >/dev/null || { echo "two-guest.sh: IBC_RXE_CHECKS: no check $c" >&2; exit 2; }
	done
fi
: "${IBC_VM_IP:=$( [ "$NODE" = 1 ] && echo 10.0.0.1 || echo 10.0.0.2)}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ "$NODE" = 2 ]; then
	[ -n "$dev" ] || { echo "two-guest.sh: node 2: no active RDMA device" >&2; exit 1; }
	fails=0
	for c in "${CHECKS[@]}"; do
		rc=0
		"check_$c" server >"$log" 2>&1 || rc=$?
		if [ "$rc" != 0 ]; then
			fails=$((fails + 1))
			echo "two-guest.sh: node 2: server of $c failed (exit status $rc):" >&2
			tail -n 15 "$log" | sed 's/^/  /' >&2
			link_state | sed 's/^/  /' >&2
		fi
	done
	exit $((fails > 0))
fi

[ -n "$dev" ] || tap_skip_all "no RDMA device with an active port"
tap_plan ${#CHECKS[@]}
echo "# node $NODE ($IBC_VM_IP) -> $PEER on $dev, gid index $gid"
for c in "${CHECKS[@]}"; do
	rc=0
	"check_$c" client >"$log" 2>&1 || rc=$?
	tap_ok "$rc" "$c: node $NODE -> $PEER" "$log"
	[ "$rc" = 0 ] || link_state | sed 's/^/#   /'
done
exit $((TAP_FAILED > 0))
