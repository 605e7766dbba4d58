# tests/rxe/lib.sh - small TAP and RDMA helpers for the shell tests of
# tests/rxe (sourced by device.t and two-guest.sh; bash).
#
#   tap_plan N | tap_skip_all REASON
#   tap_ok STATUS NAME [LOGFILE]   STATUS 0 = ok; on failure LOGFILE's tail is
#                                  printed as "# " diagnostics
#   tap_skip NAME REASON
#   rdma_active_dev                the first device with an active port (or
#                                  $IBC_RXE_DEV), empty when none
#   rdma_gid_index DEV             a RoCE v2 IPv4-mapped GID index (IB: 0)
#   wait_tcp_port PORT [S [PID]]   wait until something listens on PORT (at
#                                  most S seconds; gives up when PID is gone)
#   retry_connect S CMD...         rerun CMD for up to S seconds while it fails
#                                  to reach its server (for client sides)

TAP_N=0
TAP_FAILED=0

tap_plan() { echo "1..$1"; }
tap_skip_all() { echo "1..0 # SKIP $*"; exit 0; }

tap_ok() {
	local st=$1 name=$2 log=${3:-}
	TAP_N=$((TAP_N + 1))
	if [ "$st" = 0 ]; then
		echo "ok $TAP_N - $name"
	else
		echo "not ok $TAP_N - $name"
		TAP_FAILED=$((TAP_FAILED + 1))
		echo "#   exit status $st"
		[ -n "$log" ] && [ -s "$log" ] && tail -n 15 "$log" | sed 's/^/#   /'
	fi
	return 0
}

tap_skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP $2"
}

rdma_active_dev() {
	local d p
	if [ -n "${IBC_RXE_DEV:-}" ]; then echo "$IBC_RXE_DEV"; return 0; fi
	for d in /sys/class/infiniband/*; do
		[ -d "$d/ports" ] || continue
		for p in "$d"/ports/*; do
			if grep -q ACTIVE "$p/state" 2>/dev/null; then
				echo "${d##*/}"
				return 0
			fi
		done
	done
	return 0
}

rdma_gid_index() {
	local dev=$1 g i type
	for g in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${g##*/}
		type=$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null) || continue
		case $type in *v2*) ;; *) continue ;; esac
		case $(cat "$g" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*) echo "$i"; return 0 ;;
		esac
	done
	echo 0
}

wait_tcp_port() {
	local port=$1 end=$((SECONDS + ${2:-20})) pid=${3:-} hex
	hex=$(printf '%04X' "$port")
	# /proc/net/tcp*: local address ":PORT", state 0A = LISTEN
	while ((SECONDS < end)); do
		grep -qE "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:0000 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
		sleep 0.2
	done
	return 1
}

# retry_connect S CMD...: the output of the last attempt stays on stdout/stderr
retry_connect() {
	local secs=$1 out rc
	shift
	local end=$((SECONDS + secs))
	out=$(mktemp)
	while :; do
		rc=0
		"$@" >"$out" 2>&1 || rc=$?
		if [ "$rc" = 0 ] || ((SECONDS >= end)) ||
			! grep -qiE "couldn't connect|connection refused|rdma_connect|unreachable|REJECTED|ADDR_ERROR|ROUTE_ERROR|addr/route" "$out"; then
			break
		fi
		sleep 0.5
	done
	cat "$out"
	rm -f "$out"
	return "$rc"
}
