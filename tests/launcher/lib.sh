# Shared helpers for the launcher's shell tests (sourced, not run by prove).
# TAP: ok COND-EXIT-STATUS "name"; is GOT WANT "name"; skip_all "why"; done_testing.
T_N=0
T_FAIL=0
SRC=$(cd "$(dirname "$0")/../.." && pwd)
: "${IBC_BUILD:=$SRC/build}"
LAUNCH=$IBC_BUILD/bin/ibchar-launch
TMP=$(mktemp -d /tmp/ibc-launch-test.XXXXXX)
MARK=ibcmark$$
HOSTS_UP=0

ok() { # ok <0|nonzero> name
	T_N=$((T_N + 1))
	if [ "$1" = 0 ]; then echo "ok $T_N - $2"; else echo "not ok $T_N - $2"; T_FAIL=$((T_FAIL + 1)); fi
}
is() { # is got want name
	T_N=$((T_N + 1))
	if [ "$1" = "$2" ]; then echo "ok $T_N - $3"
	else echo "not ok $T_N - $3"; echo "#   got '$1', want '$2'"; T_FAIL=$((T_FAIL + 1)); fi
}
like() { # like text regex name
	T_N=$((T_N + 1))
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then echo "ok $T_N - $3"
	else echo "not ok $T_N - $3"; echo "#   '$1' does not match /$2/"; T_FAIL=$((T_FAIL + 1)); fi
}
skip() { T_N=$((T_N + 1)); echo "ok $T_N # SKIP $1"; }
skip_all() { echo "1..0 # SKIP $1"; cleanup; exit 0; }
done_testing() { echo "1..$T_N"; cleanup; [ "$T_FAIL" = 0 ]; }
diag() { echo "# $*"; }

cleanup() {
	if [ "$HOSTS_UP" = 1 ]; then "$SRC/scripts/testhosts" down >/dev/null 2>&1; HOSTS_UP=0; fi
	rm -rf "$TMP"
}
trap 'cleanup' EXIT
trap 'cleanup; exit 1' INT TERM

netns_why() { # prints why namespaces cannot be used, or nothing
	[ "$(id -u)" = 0 ] || { echo "not root"; return; }
	ip netns list >/dev/null 2>&1 || { echo "'ip netns' unavailable"; return; }
}
# Brings the test hosts up; takes them down at the end only when this test
# created them (another test may be using hosts that were already there).
hosts_up() {
	if ip netns list 2>/dev/null | grep -q '^ibc-h1\b'; then
		"$SRC/scripts/testhosts" up "$1" >/dev/null
	else
		"$SRC/scripts/testhosts" up "$1" >/dev/null && HOSTS_UP=1
	fi
}

# Processes of this test still alive (by the marker in their arguments, or
# node agents / launchers of this build).
leftovers() {
	pgrep -f -- "$MARK" 2>/dev/null | grep -v "^$$\$" | wc -l | tr -d ' '
}
agents_left() {
	pgrep -f -- "$IBC_BUILD/bin/ibchar-launch" 2>/dev/null | wc -l | tr -d ' '
}
now() { date +%s.%N; }
elapsed_lt() { # elapsed_lt start limit -> exit 0 when now - start < limit
	awk -v s="$1" -v e="$(now)" -v l="$2" 'BEGIN { exit !((e - s) < l) }'
}
[ -x "$LAUNCH" ] || { echo "1..0 # SKIP $LAUNCH not built"; exit 0; }
