#!/usr/bin/env bash
# optax's updates in an imported training step (tests/hlo/jax_opt_step.py
# writes one as jax.jit(step).lower(..).as_text() prints it: an MLP's loss,
# its gradient, and optax.sgd, sgd with momentum, adam or adamw) become
# carve's fused updates, one per parameter; the rewritten step computes what
# the step as written computes (f64, every output of four steps, 1e-12); in
# f32 it trains as carve's own --train does on the same model (the losses
# of four steps); a near miss (adam with eps_root > 0) keeps its moments as
# written; and
# under a batch split on 2 ranks the step equals one device.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
gen=$SRCDIR/tests/hlo/jax_opt_step.py
fused() { "$CARVE" lower "$1" 2>/dev/null | grep -oE '= (adam|sgd) ' | sort | uniq -c | awk '{print $1, $3}' | tr '\n' ' '; }
agree() {  # A B TOL: every output within TOL (relative L2 of each tensor)
  python3 - "$@" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(p) if l.startswith("{")] for p in sys.argv[1:3])
assert len(a) == len(b) and a, (len(a), len(b))
for x, y in zip(a, b):
    num = sum((p - q) ** 2 for p, q in zip(x["values"], y["values"]))
    den = sum(q * q for q in y["values"]) or 1
    assert (num / den) ** 0.5 <= float(sys.argv[3]), (x["name"], (num / den) ** 0.5)
PY
}
losses() { grep -oE '^step [0-9]+  loss [-0-9.e]+' | awk '{print $4}' | tr '\n' ' '; }
# the same model as a model file, its parameters and data named as the import names them
cat >"$tmp/mlp.cir" <<'CIR'
model jit_step {
  param params.b1 : f32[32] = normal(0.02)
  param params.b2 : f32[4] = normal(0.02)
  param params.w1 : f32[8, 32] = normal(0.02)
  param params.w2 : f32[32, 4] = normal(0.02)
  input x : f32[16, 8]
  input y : f32[16, 4]
  d = sub(add(matmul(tanh(add(matmul(x, params.w1), params.b1)), params.w2), params.b2), y)
  loss = mean(mul(d, d))
  return loss
}
CIR

for v in "sgd|4 sgd|sgd(lr = 0.01)" "momentum|4 sgd|sgd(lr = 0.01, momentum = 0.9)" "adam|4 adam|adam(lr = 0.01)" \
         "adamw|4 adam|adamw(lr = 0.01, weight_decay = 1e-4)"; do
  IFS='|' read -r opt want native <<<"$v"
  python3 "$gen" --opt "$opt" >"$tmp/s.mlir" && python3 "$gen" --opt "$opt" --dtype f64 >"$tmp/d.mlir" || { bad "generate $opt"; continue; }
  got=$(fused "$tmp/s.mlir")
  [ "$got" = "$want " ] && ok || bad "$opt: fused updates '$got', wanted '$want'"
  "$CARVE" run "$tmp/d.mlir" --steps 4 --print-outputs >"$tmp/a" 2>"$tmp/err" &&
    "$CARVE" run "$tmp/d.mlir" --steps 4 --print-outputs --no-fuse >"$tmp/b" 2>>"$tmp/err" &&
    agree "$tmp/a" "$tmp/b" 1e-12 2>>"$tmp/err" && ok || bad "$opt: rewritten and as written differ in f64: $(tail -2 "$tmp/err")"
  a=$("$CARVE" run "$tmp/s.mlir" --steps 4 2>&1 | losses) b=$("$CARVE" run "$tmp/mlp.cir" --train "$native" --steps 4 2>&1 | losses)
  python3 -c "import sys; a, b = (list(map(float, s.split())) for s in sys.argv[1:]); sys.exit(not (len(a) == 4 == len(b) and max(abs(x - y) for x, y in zip(a, b)) <= 1e-5 and a[3] < a[0]))" "$a" "$b" &&
    ok || bad "$opt: the imported step's losses '$a', carve's --train '$native' '$b'"
done

# eps_root > 0 is not Adam's form: the moments run as written, and only
# the last step, p + (-lr) u, is one (exact) fused update of direction u
python3 "$gen" --opt adam --eps-root 1e-8 >"$tmp/r.mlir" && got=$(fused "$tmp/r.mlir") && [ "$got" = "4 sgd " ] && ok ||
  bad "eps_root > 0: fused '$got', wanted '4 sgd'"
python3 "$gen" --opt adam --eps-root 1e-8 --dtype f64 >"$tmp/r.mlir" && "$CARVE" run "$tmp/r.mlir" --steps 4 --print-outputs >"$tmp/a" 2>"$tmp/err" &&
  "$CARVE" run "$tmp/r.mlir" --steps 4 --print-outputs --no-fuse >"$tmp/b" 2>>"$tmp/err" && agree "$tmp/a" "$tmp/b" 0 2>>"$tmp/err" && ok ||
  bad "eps_root > 0: rewritten and as written differ: $(tail -2 "$tmp/err")"

# the fused updates under a batch split on 2 ranks equal one device
python3 "$gen" --opt adamw >"$tmp/s.mlir"
printf 'version 1\nmesh b = 2\ntactic t {\n  shard input "x" dim 0 on b\n  shard input "y" dim 0 on b\n}\nschedule t\n' >"$tmp/bp.tac"
out=$($MPIRUN -n 2 "$CARVE" run "$tmp/s.mlir" "$tmp/bp.tac" --steps 3 --check --json 2>"$tmp/err") &&
  python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
  bad "batch split on 2 ranks: $out $(head -3 "$tmp/err")"

echo "optax: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
