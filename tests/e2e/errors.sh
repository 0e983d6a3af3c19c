#!/usr/bin/env bash
# Golden error messages: every file in tests/errors must be refused by
# 'carve check' (a .tac file against tests/data/chain.cir) with exit 1, and the first line of stderr must contain the
# file's '# expect:' text. Nothing may crash (exit >= 128) or hang.
set -u
cd "$SRCDIR/tests/errors" || exit 1
pass=0; fail=0
# model files alone; tactic files against a small model
for f in *.cir *.tac; do
  want=$(sed -n 's/^# expect: //p' "$f" | head -1)
  case $f in
    *.tac) err=$(timeout 120 "$CARVE" check "$SRCDIR/tests/data/chain.cir" "$f" 2>&1 >/dev/null); rc=$? ;;
    *) err=$(timeout 120 "$CARVE" check "$f" 2>&1 >/dev/null); rc=$? ;;
  esac
  first=$(printf '%s\n' "$err" | head -1)
  if [ "$rc" -eq 1 ] && [[ "$first" == *"$want"* ]] && [[ "$first" =~ ^([^:]+:[0-9]+:[0-9]+|carve):\ error:\  ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $f (exit $rc)"; echo "  want: $want"; echo "  got:  $first"
  fi
done
# StableHLO programs: the reader's corpus (mlir/) and the importer's (import/);
# each gives exactly one located error
for f in mlir/*.mlir import/*.mlir; do
  want=$(sed -n 's|^// expect: ||p' "$f" | head -1)
  err=$(timeout 10 "$CARVE" check "$f" 2>&1 >/dev/null); rc=$?
  first=$(printf '%s\n' "$err" | head -1)
  nerr=$(printf '%s\n' "$err" | grep -cE '^([^ ]+:[0-9]+:[0-9]+|carve): error: ')
  if [ "$rc" -eq 1 ] && [ "$nerr" -eq 1 ] && [[ "$first" == *"$want"* ]] && [[ "$first" =~ ^([^:]+:[0-9]+:[0-9]+|carve):\ error:\  ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $f (exit $rc, $nerr errors)"; echo "  want: $want"; echo "  got:  $first"
  fi
done
# an error inside a library tactic also names the line that used it
err=$(timeout 120 "$CARVE" check "$SRCDIR/tests/data/chain.cir" library_indivisible.tac 2>&1 >/dev/null)
if printf '%s\n' "$err" | grep -q "^library_indivisible.tac:5:1: note: in tactic 'bp', used here$"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL library_indivisible.tac: no note at the use line"; printf '%s\n' "$err"
fi
# a value fused into attention: the error names the op it went into and --no-fuse
err=$(timeout 120 "$CARVE" check "$SRCDIR/tests/data/attn_reshape.cir" "$SRCDIR/tests/data/fused_score.tac" 2>&1 >/dev/null)
if printf '%s\n' "$err" | head -1 | grep -q "fused_score.tac:7:15: error: no value matches 'p': 'p' was fused into the attention op '.*'.*--no-fuse"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL fused_score.tac: the error does not say where 'p' went"; printf '%s\n' "$err"
fi
# the same from a Lua tactic's ctx:shard
err=$(timeout 120 "$CARVE" check "$SRCDIR/tests/data/attn_reshape.cir" "$SRCDIR/tests/data/fused_score_lua.tac" 2>&1 >/dev/null)
if printf '%s\n' "$err" | head -1 | grep -q "fused_score.lua:4:.*no value named 'p': it was fused into the attention op"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL fused_score_lua.tac: the error does not say where 'p' went"; printf '%s\n' "$err"
fi
# and with --no-fuse the same file applies
if timeout 120 "$CARVE" check "$SRCDIR/tests/data/attn_reshape.cir" "$SRCDIR/tests/data/fused_score.tac" --no-fuse >/dev/null 2>&1; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL fused_score.tac --no-fuse: refused"
fi
echo "errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
