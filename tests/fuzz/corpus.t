#!/bin/sh
# Every libFuzzer harness (tests/fuzz/<name>.c) over every file of its
# committed corpus (tests/fuzz/corpus/<name>/: real messages and files, and
# each input that once crashed it): a regression test.  make check builds
# the harnesses with clang (make fuzz-build); without clang this skips.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
: "${IBC_BUILD:=$SRC/build}"
command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 || { echo "1..0 # SKIP clang not found: the fuzz harnesses are not built"; exit 0; }
n=0 fail=0
for f in "$SRC"/tests/fuzz/*.c; do
	name=$(basename "$f" .c)
	n=$((n + 1))
	if [ ! -x "$IBC_BUILD/fuzz/$name" ]; then
		echo "not ok $n - $name: $IBC_BUILD/fuzz/$name not built (make fuzz-build)"; fail=1; continue
	fi
	files=$(find "$SRC/tests/fuzz/corpus/$name" -type f 2>/dev/null | wc -l)
	if [ "$files" = 0 ]; then
		echo "not ok $n - $name: no corpus in tests/fuzz/corpus/$name"; fail=1; continue
	fi
	if "$SRC/scripts/fuzz.sh" check "$IBC_BUILD/fuzz" "$name"; then
		echo "ok $n - $name: its $files corpus inputs run clean"
	else
		echo "not ok $n - $name: fails on its corpus"; sed 's/^/# /' "$IBC_BUILD/fuzz/$name.check.log" | tail -30; fail=1
	fi
done
echo "1..$n"
exit $fail
