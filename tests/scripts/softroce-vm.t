#!/bin/bash
# tests/scripts/softroce-vm.t - scripts/softroce-vm's command line (no guest
# is booted here; `make check-rxe` boots them): --help, bad usage exits 2.
here=$(cd "$(dirname "$0")" && pwd)
vm=$here/../../scripts/softroce-vm

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

echo "1..8"
out=$("$vm" --help 2>&1)
rc=$?
ok $rc "--help exits 0" "$out"
for w in --peer --timeout --mem --smp --setup --verbose -e "Exit status" IBC_VM_CACHE; do
	[[ $out == *"$w"* ]] || { missing_word=$w; break; }
done
[ -z "${missing_word:-}" ]
ok $? "--help documents the options, exit status and cache" "missing: ${missing_word:-}"

usage_fails() { # usage_fails NAME ARGS...: exit status 2 and a message
	local name=$1 out rc
	shift
	out=$(env -u IBC_TEST_UNSET "$vm" "$@" 2>&1 </dev/null)
	rc=$?
	[ "$rc" = 2 ] && [ -n "$out" ]
	ok $? "$name: exit status 2 with a message" "rc=$rc out=$out"
}
usage_fails "no command"
usage_fails "unknown option" --bogus true
usage_fails "--timeout without seconds" --timeout abc true
usage_fails "--peer without a command" --peer
usage_fails "-e of an unset variable" -e IBC_TEST_UNSET true
usage_fails "--rw of a missing directory" --rw /nonexistent/ibchar true

exit $((failed > 0))
