#!/usr/bin/env bash
# The tree's dependency rules (tests/layers.sh) hold, and the check is real:
# it fails on a planted forbidden include, a planted header circle and two
# object files that call each other.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check="$SRCDIR/tests/layers.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$(bash "$check" "$SRCDIR" "$BUILDDIR" 2>&1) && ok || bad "the tree breaks its own rules: $out"

copy() { rm -rf "$tmp/src"; mkdir -p "$tmp/src"; for d in util lang runtime interp cli; do cp -r "$SRCDIR/$d" "$tmp/src/"; done; }
copy
echo '#include "interp/ir/ir.h"' >> "$tmp/src/runtime/prog.c"
out=$(bash "$check" "$tmp/src" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "runtime/prog.c includes interp/ir/ir.h (runtime may not include interp)" && ok || bad "planted runtime -> interp include not caught: $out"
copy
echo '#include "cli/cli.h"' >> "$tmp/src/interp/lower/lower.c"
out=$(bash "$check" "$tmp/src" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "interp/lower/lower.c includes cli/cli.h (interp may not include cli)" && ok || bad "planted interp -> cli include not caught: $out"
copy
echo '#include "runtime/prog.h"' >> "$tmp/src/lang/syntax.h"
out=$(bash "$check" "$tmp/src" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "lang/syntax.h includes runtime/prog.h (lang may not include runtime)" && ok || bad "planted lang -> runtime include not caught: $out"
copy
sed -i 's|#include <stddef.h>|#include <stddef.h>\n#include "util/diag.h"|' "$tmp/src/util/arena.h"
out=$(bash "$check" "$tmp/src" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "headers include each other in a circle" && ok || bad "planted header circle not caught: $out"
copy
# two object files calling each other
mkdir -p "$tmp/obj"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$tmp/obj/a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' > "$tmp/obj/b.c"
(cd "$tmp/obj" && ${CC:-cc} -c a.c b.c && ar cr libcarve.a a.o b.o) && out=$(bash "$check" "$tmp/src" "$tmp/obj" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "libcarve.a: files depend on each other in a circle" && ok || bad "planted object circle not caught: $out"
echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
