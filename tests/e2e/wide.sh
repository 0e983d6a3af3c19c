#!/usr/bin/env bash
# Ops as wide as real programs make them: a concatenation of 300 operands
# (a CNN's gradient concatenates 256) and a call of 300 arguments, in a
# model file and in StableHLO, through every command: check, apply, lower,
# run (one device and 2 ranks with --check), simulate, export and import
# back, show and explain. No limit on operands is reachable from input.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
n=300
python3 - "$tmp" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
ops = ", ".join(f"%arg{i}" for i in range(n))
args = ", ".join(f"%arg{i}: tensor<2x3xf32>" for i in range(n))
tys = ", ".join("tensor<2x3xf32>" for _ in range(n))
open(f"{d}/wide.mlir", "w").write(f"""module @wide {{
  func.func public @main({args}) -> tensor<f32> {{
    %0 = stablehlo.concatenate {ops}, dim = 0 : ({tys}) -> tensor<{2 * n}x3xf32>
    %1 = call @first_and_last({ops}) : ({tys}) -> tensor<2x3xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.pad %1, %z, low = [0, 0], high = [{2 * n - 2}, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<{2 * n}x3xf32>
    %3 = stablehlo.add %0, %2 : tensor<{2 * n}x3xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<{2 * n}x3xf32>
    %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<{2 * n}x3xf32>, tensor<f32>) -> tensor<f32>
    return %5 : tensor<f32>
  }}
  func.func private @first_and_last({args}) -> tensor<2x3xf32> {{
    %0 = stablehlo.add %arg0, %arg{n - 1} : tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }}
}}
""")
lines = [f"  param p{i} : f32[2, 3]" for i in range(n)]
cat = ", ".join(f"p{i}" for i in range(n))
open(f"{d}/wide.cir", "w").write("model wide {\n" + "\n".join(lines) + f"\n  c = concat([{cat}], 0)\n  loss = sum(mul(c, c))\n  return loss\n}}\n")
open(f"{d}/wide.tac", "w").write("mesh a = 2\ntactic t {\n  shard params dim 0 on a\n}\nschedule t\n")
PY
for m in wide.cir wide.mlir; do
  f=$tmp/$m
  p=p; [ "$m" = wide.mlir ] && p=arg
  out=$("$CARVE" check "$f" 2>&1) && [[ "$out" == *"well-formed"*"300 params"* ]] && ok || bad "check $m: $out"
  for train in "" "sgd(lr = 0.1)"; do
    t=${train:+--train}
    "$CARVE" apply "$f" "$tmp/wide.tac" $t ${train:+"$train"} >"$tmp/out" 2>&1 && grep -q "^total:" "$tmp/out" && ok || bad "apply $m $train: $(tail -3 "$tmp/out")"
    "$CARVE" lower "$f" "$tmp/wide.tac" $t ${train:+"$train"} >"$tmp/out" 2>&1 && ok || bad "lower $m $train: $(tail -3 "$tmp/out")"
    "$CARVE" simulate "$f" "$tmp/wide.tac" $t ${train:+"$train"} >"$tmp/out" 2>&1 && ok || bad "simulate $m $train: $(tail -3 "$tmp/out")"
    "$CARVE" run "$f" $t ${train:+"$train"} --steps 2 >"$tmp/out" 2>&1 && ok || bad "run $m $train: $(tail -3 "$tmp/out")"
    out=$($MPIRUN -n 2 "$CARVE" run "$f" "$tmp/wide.tac" $t ${train:+"$train"} --steps 2 --check --json 2>"$tmp/err") &&
      python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
      bad "run $m $train on 2 ranks: $out $(head -3 "$tmp/err")"
  done
  "$CARVE" export "$f" "$tmp/wide.tac" -o "$tmp/back.mlir" >/dev/null 2>"$tmp/err" && "$CARVE" import "$tmp/back.mlir" -o "$tmp/back.cir" >/dev/null 2>>"$tmp/err" &&
    "$CARVE" check "$tmp/back.cir" >/dev/null 2>>"$tmp/err" && ok || bad "export, import and check $m: $(head -3 "$tmp/err")"
  "$CARVE" show "$f" "$tmp/wide.tac" ${p}299 >"$tmp/out" 2>&1 && ok || bad "show $m: $(tail -3 "$tmp/out")"
  "$CARVE" explain "$f" "$tmp/wide.tac" ${p}150 >"$tmp/out" 2>&1 && ok || bad "explain $m: $(tail -3 "$tmp/out")"
done
echo "wide: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
