#!/usr/bin/env bash
# check-rxe.sh - the verbs tests on Soft-RoCE (run by `make check-rxe` after
# the build):
#   1. one guest:  IBC_TEST_XPORT=verbs prove -r over every path listed in
#      tests/rxe/one-guest.list (one per line, relative to the checkout;
#      "build/..." means $IBC_BUILD/...; blank lines and # comments ignored)
#   2. two guests: tests/rxe/two-guest.sh on both (IBC_TEST_XPORT=verbs), guest 1 with
#      IBC_RXE_NODE=1 IBC_RXE_PEER=10.0.0.2 (it prints TAP, parsed by prove
#      here), guest 2 with IBC_RXE_NODE=2 IBC_RXE_PEER=10.0.0.1
# then a summary; the exit status is non-zero on any failure.
#
# Environment: IBC_BUILD (default ./build), PROVE_FLAGS (extra prove options,
# e.g. -v), IBC_RXE_TIMEOUT (seconds per phase, default 1200),
# IBC_RXE_ONLY=one|two (run one phase).  Every IBC_* variable reaches the
# guests (scripts/softroce-vm).
set -uo pipefail

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$ROOT" || exit 1
export IBC_BUILD=${IBC_BUILD:-$ROOT/build}
VM=$ROOT/scripts/softroce-vm
LIST=tests/rxe/one-guest.list
TIMEOUT=${IBC_RXE_TIMEOUT:-1200}
ONLY=${IBC_RXE_ONLY:-}
me=check-rxe

"$VM" --setup || { echo "$me: cannot set up the Soft-RoCE guest" >&2; exit 1; }

declare -A result=()
fails=0

# ---- one guest ----------------------------------------------------------
if [ "$ONLY" != two ]; then
	paths=() bad=0
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(echo "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		[ -n "$line" ] || continue
		case $line in build/*) line=$IBC_BUILD/${line#build/} ;; esac
		if [ ! -e "$line" ]; then
			echo "$me: $LIST: no such file or directory: $line" >&2
			bad=1
			continue
		fi
		paths+=("$line")
	done <"$LIST"
	echo "$me: one guest: prove over ${#paths[@]} path(s) from $LIST" >&2
	if ((${#paths[@]} == 0)); then
		result[one]="NOTESTS"
	else
		# shellcheck disable=SC2086
		cmd="IBC_TEST_XPORT=verbs prove -r ${PROVE_FLAGS:-} $(printf '%q ' "${paths[@]}")"
		rc=0
		"$VM" --timeout "$TIMEOUT" "$cmd" || rc=$?
		if [ "$rc" = 0 ]; then result[one]=PASS
		else result[one]="FAIL (exit status $rc)"; fi
	fi
	if ((bad)); then result[one]="FAIL (missing paths in $LIST; ${result[one]})"; fi
	[ "${result[one]}" = PASS ] || [ "${result[one]}" = NOTESTS ] || fails=$((fails + 1))
fi

# ---- two guests ---------------------------------------------------------
if [ "$ONLY" != one ]; then
	echo "$me: two guests: tests/rxe/two-guest.sh" >&2
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibchar-check-rxe.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# prove parses guest 1's TAP; the wrapper is what prove runs
	{
		echo '#!/bin/bash'
		echo "cd $(printf '%q' "$ROOT") || exit 1"
		printf 'exec %q --timeout %q --peer %q %q\n' "$VM" "$TIMEOUT" \
			"IBC_TEST_XPORT=verbs IBC_RXE_NODE=2 IBC_RXE_PEER=10.0.0.1 bash tests/rxe/two-guest.sh" \
			"IBC_TEST_XPORT=verbs IBC_RXE_NODE=1 IBC_RXE_PEER=10.0.0.2 bash tests/rxe/two-guest.sh"
	} >"$tmp/rxe-two-guests.t"
	chmod +x "$tmp/rxe-two-guests.t"
	rc=0
	# shellcheck disable=SC2086
	(cd "$tmp" && prove ${PROVE_FLAGS:-} rxe-two-guests.t) || rc=$?
	if [ "$rc" = 0 ]; then result[two]=PASS
	else result[two]="FAIL (prove exit status $rc)"; fi
	[ "${result[two]}" = PASS ] || fails=$((fails + 1))
fi

echo
echo "check-rxe summary:"
[ -n "${result[one]:-}" ] && echo "  one guest  ($LIST): ${result[one]}"
[ -n "${result[two]:-}" ] && echo "  two guests (tests/rxe/two-guest.sh): ${result[two]}"
if ((fails)); then
	echo "Result: FAIL"
	exit 1
fi
echo "Result: PASS"
