#!/bin/sh
# scripts/layers: ibchar's own tree keeps its dependencies one way (the layer
# order of docs/design.md, includes and the call graph of this build's
# objects); and on small made-up trees the check finds each kind of fault:
# an upward include, an upward call, two folders of one layer that use each
# other, a folder on no layer, two files that call each other, a longer loop,
# a header whose inline code calls back into a file that includes it; and
# a header's inline helpers emitted out of line are nobody's definition.
. "$(dirname "$0")/../lib/tap.sh"
tap_need "$BUILD/bin/ibchar"
tap_tmp layers
root=$(cd "$(dirname "$0")/../.." && pwd)
L=$root/scripts/layers
echo "1..12"

out=$("$L" --root "$root" --build "$BUILD" 2>&1)
rc=$?
ok $rc "ibchar's tree: includes and calls run one way"
[ $rc -eq 0 ] || echo "$out" | head -20 | sed 's/^/# /'

# a made-up tree: three layers, core < xport < harness | other
mk() { # mk DIR: the tree's design and folders
	mkdir -p "$1/docs" "$1/impl/core" "$1/impl/xport" "$1/impl/harness" "$1/impl/other"
	printf '## Layers\n\n```\n# bottom first\ncore\nxport\nharness other\n```\n' >"$1/docs/design.md"
}
obj() { # obj TREE FILE.c: compile into TREE/build/obj/FILE.o
	mkdir -p "$(dirname "$1/build/obj/$2")"
	cc -c -Wno-implicit-function-declaration -I"$1/impl" -o "$1/build/obj/${2%.c}.o" "$1/$2"
}
check() { # check TREE [--build]: the check's output in $out, its status in $rc
	out=$("$L" --root "$1" ${2:+--build "$1/build"} 2>&1)
	rc=$?
}

t=$tmp/clean; mk "$t"
echo 'int core_f(void) { return 1; }' >"$t/impl/core/a.c"
printf '#include "core/a.h"\nint core_f(void);\nint x_f(void) { return core_f(); }\n' >"$t/impl/xport/b.c"
echo 'int core_f(void);' >"$t/impl/core/a.h"
obj "$t" impl/core/a.c; obj "$t" impl/xport/b.c
check "$t" b
[ $rc -eq 0 ]; ok $? "a tree whose includes and calls run down passes ($out)"

t=$tmp/upinc; mk "$t"
echo 'int h;' >"$t/impl/harness/h.h"
echo '#include "harness/h.h"' >"$t/impl/core/a.c"
check "$t"
[ $rc -eq 1 ] && echo "$out" | grep -q '^upward: impl/core/a.c -> impl/harness/h.h (include)'
ok $? "an upward include is named, exit 1"

t=$tmp/upcall; mk "$t"
echo 'int h_f(void) { return 2; }' >"$t/impl/harness/h.c"
echo 'int h_f(void); int core_g(void) { return h_f(); }' >"$t/impl/core/a.c"
obj "$t" impl/harness/h.c; obj "$t" impl/core/a.c
check "$t" b
[ $rc -eq 1 ] && echo "$out" | grep -q '^upward: impl/core/a.c -> impl/harness/h.c (calls h_f)'
ok $? "an upward call is named with the function, exit 1"

t=$tmp/side; mk "$t"
echo 'int o;' >"$t/impl/other/o.h"
echo '#include "other/o.h"' >"$t/impl/harness/h.c"
check "$t"
[ $rc -eq 1 ] && echo "$out" | grep -q '^sideways: impl/harness/h.c -> impl/other/o.h'
ok $? "two folders of one layer may not use each other"

t=$tmp/stray; mk "$t"; mkdir -p "$t/impl/stray"
echo 'int s;' >"$t/impl/stray/s.h"
echo '#include "stray/s.h"' >"$t/impl/harness/h.c"
check "$t"
[ $rc -eq 1 ] && echo "$out" | grep -q 'folder stray is not on any layer'
ok $? "a folder on no layer is named"

t=$tmp/pair; mk "$t"
echo 'int b_f(void); int a_f(int n) { return n ? b_f() : 0; }' >"$t/impl/xport/a.c"
echo 'int a_f(int); int b_f(void) { return a_f(0); }' >"$t/impl/xport/b.c"
obj "$t" impl/xport/a.c; obj "$t" impl/xport/b.c
check "$t" b
[ $rc -eq 1 ] && echo "$out" | grep -q '^circle: impl/xport/a.c <-> impl/xport/b.c$'
ok $? "two files that call each other are a circle"

t=$tmp/loop; mk "$t"
echo 'int b_f(void); int a_f(void) { return b_f(); }' >"$t/impl/xport/a.c"
echo 'int c_f(void); int b_f(void) { return c_f(); }' >"$t/impl/xport/b.c"
echo 'int a_f(void); int c_f(void) { return a_f(); }' >"$t/impl/xport/c.c"
for f in a b c; do obj "$t" impl/xport/$f.c; done
check "$t" b
[ $rc -eq 1 ] && echo "$out" | grep -q '^circle: impl/xport/a.c <-> impl/xport/b.c <-> impl/xport/c.c$'
ok $? "a loop of three files is a circle"

t=$tmp/inline; mk "$t"
printf 'void slow(void);\nstatic inline void fast(int x) { if (x) slow(); }\n' >"$t/impl/xport/priv.h"
printf '#include "xport/priv.h"\nvoid slow(void) {}\nvoid use(void); void use(void) { fast(1); }\n' \
	>"$t/impl/xport/mem.c"
obj "$t" impl/xport/mem.c
check "$t" b
[ $rc -eq 1 ] && echo "$out" | grep -q '^circle: impl/xport/mem.c <-> impl/xport/priv.h$'
ok $? "a header whose inline code calls the file that includes it is a circle"

# a header's inline code may call its own .c (xport.h and xport.c), and an
# algorithm's ops table named in its family's table is data, not a call
t=$tmp/own; mk "$t"
printf 'void x_slow(void);\nstatic inline void x_fast(int v) { if (v) x_slow(); }\n' >"$t/impl/xport/x.h"
printf '#include "xport/x.h"\nextern int alg_ops; int *tab[] = { &alg_ops };\nvoid x_slow(void) {}\n' \
	>"$t/impl/xport/x.c"
printf '#include "xport/x.h"\nint alg_ops = 1;\nvoid alg_run(void); void alg_run(void) { x_fast(1); }\n' \
	>"$t/impl/xport/alg.c"
obj "$t" impl/xport/x.c; obj "$t" impl/xport/alg.c
check "$t" b
[ $rc -eq 0 ]; ok $? "a header calling its own .c, and a table naming an algorithm's data, pass ($out)"

# a header's static inline helpers, emitted out of line (a local symbol) by
# the files that use them, belong to none of those files
t=$tmp/helpers; mk "$t"
printf 'static inline int k_slot(int i) { return i * 2; }\nstatic inline int k_post(int i) { return k_slot(i) + 1; }\nint b_f(void);\n' \
	>"$t/impl/xport/k.h"
printf '#include "xport/k.h"\nint a_f(void); int a_f(void) { return k_slot(1) + k_post(2) + b_f(); }\n' >"$t/impl/xport/a.c"
printf '#include "xport/k.h"\nint b_f(void) { return k_post(3); }\n' >"$t/impl/xport/b.c"
obj "$t" impl/xport/a.c; obj "$t" impl/xport/b.c
nm -P "$t/build/obj/impl/xport/a.o" | grep -q '^k_slot t' || echo "# k_slot is not a local symbol in a.o"
check "$t" b
[ $rc -eq 0 ]; ok $? "a header's inline helpers emitted out of line by their callers make no circle ($out)"

t=$tmp/nolayers; mk "$t"; echo '# no layers here' >"$t/docs/design.md"
check "$t"
[ $rc -eq 2 ] && echo "$out" | grep -q "no fenced block under '## Layers'"
ok $? "a design without its Layers block exits 2 with one line"
