#!/usr/bin/env bash
# carve repl as a script reads it (commands on stdin: no prompt, no escape
# codes, exit 1 when a line failed) and as a person uses it (a
# pseudo-terminal: completion, a statement over two lines, the history).
set -u
ex="$SRCDIR/examples"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T=(--train 'adam(lr = 1e-3)')

printf 'shard param "l0.mlp.w1" dim 1 on model\ncollectives\nsave %s/s.tac\nquit\n' "$tmp" |
  timeout 120 "$CARVE" repl "$ex/gpt2_small.cir" "${T[@]}" --mesh 'batch=2, model=2' > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q "total: 2 all_reduce" "$tmp/out" && ! grep -q "carve> " "$tmp/out" && ! grep -q $'\e' "$tmp/out" && ok || bad "piped session (exit $rc): $(cat "$tmp/out" "$tmp/err")"
"$CARVE" apply "$ex/gpt2_small.cir" "$tmp/s.tac" "${T[@]}" > "$tmp/apply" 2>&1 && grep -q "total: 2 all_reduce" "$tmp/apply" && ok || bad "the saved file applies: $(cat "$tmp/apply")"
printf 'shard param "nope" dim 0 on model\nmesh\n' | timeout 120 "$CARVE" repl "$ex/gpt2_small.cir" --mesh 'model=2' > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "error: no param matches 'nope'" "$tmp/out" && grep -q "^mesh: model=2" "$tmp/out" && ok || bad "an error: exit 1, the session goes on (exit $rc): $(cat "$tmp/out")"
printf 'use "zero" as z (axis = model,\n' | timeout 120 "$CARVE" repl "$ex/gpt2_small.cir" --mesh 'model=2' > "$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "the input ended inside a statement" "$tmp/out" && ok || bad "input ending mid-statement: $(cat "$tmp/out")"
printf 'load %s/gpt2_small.cir\nvalues l0.mlp.w*\nload %s/gpt2_small_mp.tac\ncollectives\n' "$ex" "$ex" | timeout 120 "$CARVE" repl > "$tmp/out" 2>&1
[ $? -eq 0 ] && grep -q "l0.mlp.w1 " "$tmp/out" && grep -q "total: 4 all_reduce" "$tmp/out" && ok || bad "load: $(cat "$tmp/out")"
# a Lua tactic typed in the REPL: an op whose results the script replaced prints (it segfaulted)
printf 'return function(ctx)\n  local op = ctx:value("h").producer\n  op.results = 5\n  print(op)\nend\n' > "$tmp/op.lua"
printf 'tactic t = lua "%s/op.lua" ()\nmesh\n' "$tmp" | timeout 120 "$CARVE" repl "$ex/mlp_small.cir" --mesh 'model=2' > "$tmp/out" 2>&1
[ $? -eq 0 ] && grep -q "op gelu -> 'h'" "$tmp/out" && grep -q "^mesh: model=2" "$tmp/out" && ok || bad "a Lua op with its results replaced: $(cat "$tmp/out")"
# a mesh too large is refused where it is typed, and the session keeps its mesh
printf 'mesh a = 1073741824\ncollectives\nmesh\n' | timeout 120 "$CARVE" repl "$ex/mlp_small.cir" --mesh 'model=2' > "$tmp/out" 2>&1
[ $? -eq 1 ] && grep -q "(repl line 1):1:6: error: the mesh has more than 2^20 devices" "$tmp/out" && grep -q "^mesh: model=2" "$tmp/out" && ok ||
  bad "a mesh of 2^30 devices: $(cat "$tmp/out")"
"$BUILDDIR/tests/repl/pty_drive" "$CARVE" "$ex/gpt2_small.cir" "$tmp/history" > "$tmp/pty" 2>&1 && ok || bad "pseudo-terminal: $(cat "$tmp/pty")"
echo "repl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
