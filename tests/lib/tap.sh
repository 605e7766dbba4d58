# tests/lib/tap.sh - TAP helpers for the shell tests (sourced, not run):
#
#   . "$(dirname "$0")/../lib/tap.sh"
#   tap_need "$BUILD/bin/ibchar" ...   skip the whole file unless each is executable
#   tap_tmp NAME                       $tmp: a fresh directory, removed at exit
#   echo "1..N"; ok STATUS "name"      one TAP line (STATUS 0 = ok)
#   ... | diag                         stdin as "# " lines on stderr: what a failed
#                                      check saw, shown by prove (stdout comments
#                                      are not, unless prove -v)
#
# BUILD is $IBC_BUILD, else the checkout's build/.
BUILD=${IBC_BUILD:-$(dirname "$0")/../../build}
n=0
diag() { sed 's/^/# /' >&2; }
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
tap_need() {
	for f in "$@"; do
		[ -x "$f" ] || { echo "1..0 # SKIP $f not built"; exit 0; }
	done
}
tap_tmp() {
	tmp=$(mktemp -d "/tmp/ibc-$1-XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
}
