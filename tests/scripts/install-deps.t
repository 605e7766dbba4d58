#!/bin/bash
# tests/scripts/install-deps.t - scripts/install-deps.sh: nothing missing on
# this machine (after `make check` ran it), a second run does nothing, and
# missing packages go to apt-get once (checked with a fake apt-get/sudo).
here=$(cd "$(dirname "$0")" && pwd)
deps=$here/../../scripts/install-deps.sh

if [ ! -e /etc/debian_version ] || ! command -v dpkg-query >/dev/null; then
	echo "1..0 # SKIP not a Debian system"
	exit 0
fi

n=0 failed=0
ok() { # ok STATUS NAME [DIAG]
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

echo "1..9"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$deps" --check 2>&1)
rc=$?
ok $rc "--check: nothing missing on this machine" "$out"

# fake apt-get and sudo: they log their arguments; apt-get install fails
mkdir "$tmp/bin"
cat >"$tmp/bin/apt-get" <<'F'
#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
case " $* " in *" install "*) echo "E: fake apt-get: no install here" >&2; exit 100 ;; esac
exit 0
F
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
chmod +x "$tmp/bin/apt-get" "$tmp/bin/sudo"
export FAKE_LOG=$tmp/apt.log
: >"$FAKE_LOG"

out=$(PATH=$tmp/bin:$PATH "$deps" 2>&1)
rc=$?
ok $rc "second run succeeds" "$out"
[ -z "$out" ]
ok $? "second run prints nothing" "$out"
[ ! -s "$FAKE_LOG" ]
ok $? "second run does not call apt-get" "$(cat "$FAKE_LOG")"

missing=ibchar-test-no-such-package
out=$("$deps" --check "$missing" 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"$missing"* ]]
ok $? "--check names a missing package and exits 1" "rc=$rc: $out"

out=$(TMPDIR=$tmp PATH=$tmp/bin:$PATH "$deps" "$missing" bash 2>&1)
rc=$?
[ "$rc" != 0 ]
ok $? "failed apt-get install: non-zero exit" "rc=$rc"
[[ $out == *"apt-get failed"*"$missing"* ]]
ok $? "failed apt-get install: message names the package" "$out"
[ "$(grep -c ' update' "$FAKE_LOG")" = 1 ]
ok $? "apt-get update runs once" "$(cat "$FAKE_LOG")"
grep -q "install .*--no-install-recommends.* $missing\$" "$FAKE_LOG"
ok $? "apt-get install gets only the missing package" "$(cat "$FAKE_LOG")"

exit $((failed > 0))
