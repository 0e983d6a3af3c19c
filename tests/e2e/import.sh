#!/usr/bin/env bash
# StableHLO import end to end: the four real programs of
# shared/third_party/stablehlo-models import and check (op counts, results),
# an imported model file reads back, the Llama block's sdy shardings become
# a tactic file, the chess model and BERT run forward on 1 rank and give
# the same outputs (--print-outputs) on 2 and 4 ranks, and a CNN trains.
set -u
models=${STABLEHLO_MODELS:-$SRCDIR/../shared/third_party/stablehlo-models}
[ -d "$models" ] || models=/work/shared/third_party/stablehlo-models
[ -d "$models" ] || { echo "no $models: skipped"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export LSAN_OPTIONS="suppressions=$SRCDIR/tests/mpi/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
MPIRUN="timeout 600 mpirun --oversubscribe -x LSAN_OPTIONS -x ASAN_OPTIONS"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
chess=$models/stablehlo-exports/searchless_chess_9m.mlir
bert=$models/stablehlo-exports/pt_bert.mlir
llama=$models/tt-mlir/sdy_llama_attn_prefill_manual.mlir
nano=$models/byteir/NanoGPT_BW_input.mlir

# import and check: IR ops and params of each program (the .mlir op counts
# differ: calls are inlined, broadcast_in_dim may become reshape + broadcast)
expect_check() {  # FILE OPS PARAMS
  local out; out=$(timeout 120 "$CARVE" check "$1" 2>&1)
  [[ "$out" == *"well-formed: $2 ops, $3 params"* ]] && ok || bad "check $(basename "$1"): $out"
}
expect_check "$chess" 199 94
expect_check "$bert" 1843 199
expect_check "$llama" 67 8
expect_check "$nano" 750 177

# results: names, shapes and dtypes as the functions declare them
results() {  # FILE -> one "name shape dtype" a line
  "$CARVE" run "$1" --steps 1 --print-outputs 2>"$tmp/err" | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        o = json.loads(line); print(o["name"], "x".join(map(str, o["shape"])), o["dtype"], len(o["values"]))'
}
r=$(results "$llama"); [ "$r" = "out 1x1024x2048 bf16 2097152" ] && ok || bad "llama results: $r $(head -3 "$tmp/err")"

# the imported model file reads back to the same program
"$CARVE" import "$chess" -o "$tmp/chess.cir" --quiet && "$CARVE" check "$tmp/chess.cir" >/dev/null 2>&1 && ok || bad "import chess -o .cir"
"$CARVE" import "$bert" -o "$tmp/bert.cir" --params-from-args 'arg?, arg??, arg1[0-8]?, arg19[0-8]' --quiet 2>"$tmp/err" && ok || bad "import --params-from-args: $(cat "$tmp/err")"
grep -q '^  input arg199 : i32\[1, 512\]' "$tmp/bert.cir" && grep -q '^  param arg0 : f32\[30522, 768\]' "$tmp/bert.cir" && ok || bad "bert params and inputs"

# JAX's markers pass their values through: sharding constraints (sdy and
# custom_call @Sharding) and optimization_barrier; the sdy constraint is a
# `shard value` statement, and the tactic file applies
markers=$SRCDIR/tests/data/hlo/jax_markers.mlir
"$CARVE" import "$markers" -o "$tmp/mk.cir" --tactics-out "$tmp/mk.tac" --quiet 2>"$tmp/err" &&
  grep -q '^  v0 = tanh(arg0)$' "$tmp/mk.cir" && grep -q '^  out = add(v0, v0)$' "$tmp/mk.cir" &&
  grep -q '^  shard param "arg0" dim 0 on x$' "$tmp/mk.tac" && grep -q '^  shard value "v0" dim 1 on y$' "$tmp/mk.tac" &&
  "$CARVE" apply "$tmp/mk.cir" "$tmp/mk.tac" --json 2>>"$tmp/err" | grep -q '"name":"v0", "kind":"value", "shape":\[8, 8\], "sharding":\[\["x"\], \["y"\]\]' && ok ||
  bad "jax markers: $(cat "$tmp/err") $(cat "$tmp/mk.cir" "$tmp/mk.tac")"

# lax.scan's while loop unrolls: its outputs are those of the same layers
# written out by hand, to the bit
"$CARVE" run "$SRCDIR/tests/data/hlo/scan.mlir" --steps 1 --print-outputs >"$tmp/scan1" 2>"$tmp/err" &&
  "$CARVE" run "$SRCDIR/tests/data/hlo/scan_unrolled.mlir" --steps 1 --print-outputs >"$tmp/scan2" 2>>"$tmp/err" &&
  [ "$(grep -c '"name"' "$tmp/scan1")" = 2 ] && cmp -s <(grep '"name"' "$tmp/scan1") <(grep '"name"' "$tmp/scan2") && ok ||
  bad "scan unrolled: $(cat "$tmp/err") $(head -c 400 "$tmp/scan1") $(head -c 400 "$tmp/scan2")"

# a Flax CNN's loss (convolutions with stride, padding and feature groups,
# max and average pooling as reduce_window): it imports, trains (the loss
# falls), and under a batch split on 2 ranks equals one device
cnn=$SRCDIR/tests/data/hlo/cnn.mlir
"$CARVE" import "$cnn" -o "$tmp/cnn.cir" --params-from-args 'params*' --quiet 2>"$tmp/err" &&
  grep -q '^  input images : f32\[8, 12, 12, 1\]$' "$tmp/cnn.cir" && grep -q '^  param params.conv2.kernel : f32\[3, 3, 4, 8\]' "$tmp/cnn.cir" && ok ||
  bad "import cnn: $(cat "$tmp/err")"
"$CARVE" run "$tmp/cnn.cir" --train 'sgd(lr = 0.5)' --steps 30 >"$tmp/cnn.1" 2>"$tmp/err" &&
  awk '/^step 1 /{a=$4} /^step 30 /{b=$4} END {exit !(a > 2.2 && b < 0.9 * a)}' "$tmp/cnn.1" && ok || bad "cnn training: $(cat "$tmp/err") $(grep -E '^step (1|30) ' "$tmp/cnn.1")"
$MPIRUN -n 2 "$CARVE" run "$tmp/cnn.cir" "$SRCDIR/examples/mlp_bp.tac" --train 'sgd(lr = 0.5)' --steps 5 --check >"$tmp/cnn.2" 2>"$tmp/err" &&
  grep -q 'max relative error against one device.*within' "$tmp/cnn.2" && ok || bad "cnn batch split on 2 ranks: $(tail -3 "$tmp/err") $(tail -2 "$tmp/cnn.2")"

# an MLP with dropout as JAX writes it: the PRNG key is a ui32 input,
# threefry2x32 runs in ui32, bitcast_convert makes the uniform floats; the
# training step runs and the loss falls
"$CARVE" import "$SRCDIR/tests/data/hlo/dropout.mlir" -o "$tmp/drop.cir" --params-from-args 'params*' --quiet 2>"$tmp/err" &&
  grep -q '^  input rng : ui32\[2\]$' "$tmp/drop.cir" &&
  "$CARVE" run "$tmp/drop.cir" --train 'sgd(lr = 0.5)' --steps 10 >"$tmp/drop.1" 2>>"$tmp/err" &&
  awk '/^step 1 /{a=$4} /^step 10 /{b=$4} END {exit !(a > 0 && b < 0.1 * a)}' "$tmp/drop.1" && ok ||
  bad "dropout: $(cat "$tmp/err") $(grep -E '^step (1|10) ' "$tmp/drop.1" 2>/dev/null)"

# StableHLO's checks (custom_call @check.expect_close in the testdata
# corpus, the check dialect of the interpret tests): they hold, and one
# that does not fails the run with its place
"$CARVE" run "$SRCDIR/tests/data/hlo/checks_pass.mlir" --steps 1 >/dev/null 2>"$tmp/err" && ok || bad "checks_pass: $(cat "$tmp/err")"
"$CARVE" run "$SRCDIR/tests/data/hlo/checks_fail.mlir" --steps 1 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'checks_fail.mlir:[0-9]*:[0-9]*: check.expect_eq_const failed' "$tmp/err" && [ "$(grep -c error "$tmp/err")" = 1 ] && ok ||
  bad "checks_fail must exit 1 naming the check: $(cat "$tmp/err")"
# closeness in ULPs as the reference interpreter counts it: 3 for the custom call, the op's own bounds
"$CARVE" run "$SRCDIR/tests/data/hlo/checks_ulp.mlir" --steps 1 >/dev/null 2>"$tmp/err" && ok || bad "checks_ulp: $(cat "$tmp/err")"
"$CARVE" run "$SRCDIR/tests/data/hlo/checks_ulp_fail.mlir" --steps 1 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'checks_ulp_fail.mlir:6:3: check.expect_close failed' "$tmp/err" && ok ||
  bad "checks_ulp_fail (4 ULPs apart) must exit 1 naming the check: $(cat "$tmp/err")"

# sdy shardings -> tactic file; applying it splits what the annotations split
"$CARVE" import "$llama" -o "$tmp/llama.cir" --tactics-out "$tmp/llama.tac" --quiet && ok || bad "import llama"
grep -q 'mesh _axis_0 = 2' "$tmp/llama.tac" && [ "$(grep -c '^  shard param' "$tmp/llama.tac")" -eq 4 ] && ok || bad "llama.tac: $(cat "$tmp/llama.tac")"
out=$("$CARVE" apply "$tmp/llama.cir" "$tmp/llama.tac" --verbose 2>&1)
echo "$out" | grep -qE '^p0\.1 +param +\[2048, 2048\] +\[-, _axis_0\]' && ok || bad "apply llama.tac: $(echo "$out" | head -5)"

# carve's megatron tactic, applied to the program without its annotations,
# splits the four weights as the sdy annotations do (q, k, v by rows of the
# PyTorch layout, the output projection by columns)
printf 'version 1\nmesh _axis_0 = 2\nuse "megatron" as mp (axis = _axis_0)\nschedule mp\n' >"$tmp/mp.tac"
params() {  # apply output -> "name sharding" of each param
  awk '$2 == "param" { print $1, $4 }' | sort
}
want=$("$CARVE" apply "$tmp/llama.cir" "$tmp/llama.tac" --verbose 2>&1 | params)
got=$("$CARVE" apply "$tmp/llama.cir" "$tmp/mp.tac" --verbose 2>&1 | params)
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "megatron on llama: $got, annotations: $want"

# forward runs: 1 rank, then 2 and 4 ranks under a split of the params
same() {  # A B [TOL]: equal up to float rounding (relative L2 norm of the difference)
  python3 - "$1" "$2" "${3:-1e-5}" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
b = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
assert len(a) == len(b) and a, "different outputs"
for x, y in zip(a, b):
    assert x["shape"] == y["shape"] and x["dtype"] == y["dtype"], (x["shape"], y["shape"])
    num = sum((p - q) ** 2 for p, q in zip(x["values"], y["values"]))
    den = sum(q * q for q in y["values"]) or 1
    assert (num / den) ** 0.5 < float(sys.argv[3]), (x["name"], (num / den) ** 0.5)
PY
}
for m in chess bert; do
  f=${!m}
  "$CARVE" run "$f" --steps 1 --print-outputs >"$tmp/$m.1" 2>"$tmp/err" && ok || bad "$m on 1 rank: $(head -3 "$tmp/err")"
  for n in 2 4; do
    $MPIRUN -n $n "$CARVE" run "$f" "$SRCDIR/tests/data/split_params.tac" --mesh "model=$n" --steps 1 --print-outputs \
      >"$tmp/$m.$n" 2>"$tmp/err" || { bad "$m on $n ranks: $(head -3 "$tmp/err")"; continue; }
    same "$tmp/$m.$n" "$tmp/$m.1" 2>"$tmp/err" && ok || bad "$m on $n ranks differs: $(tail -1 "$tmp/err")"
  done
done
# the Llama block under megatron on 2 ranks: each rank's half of the output
# projection is rounded to bf16 before the all-reduce (as XLA's would be),
# so the two agree to bf16's precision (2^-8), not f32's
"$CARVE" run "$llama" --steps 1 --print-outputs >"$tmp/llama.1" 2>"$tmp/err" && ok || bad "llama on 1 rank: $(head -3 "$tmp/err")"
$MPIRUN -n 2 "$CARVE" run "$tmp/llama.cir" "$tmp/mp.tac" --steps 1 --print-outputs >"$tmp/llama.2" 2>"$tmp/err" \
  && same "$tmp/llama.2" "$tmp/llama.1" 4e-3 2>"$tmp/err" && ok || bad "llama under megatron on 2 ranks: $(tail -2 "$tmp/err")"
r=$(grep '^{' "$tmp/chess.1" | python3 -c 'import json,sys; o=json.loads(sys.stdin.readline()); print(o["name"], o["shape"], o["dtype"])')
[ "$r" = "out [33, 79, 128] f32" ] && ok || bad "chess result: $r"
r=$(grep '^{' "$tmp/bert.1" | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["shape"]) for l in sys.stdin))')
[ "$r" = "[1, 7, 768] [1, 768]" ] && ok || bad "bert results: $r"

# an imported training step (JAX's paths: results [1]['w'] update params['w'])
# is iterated by run --steps: its new values feed the next step, and the
# losses are those of the same model trained by carve (same names, same init);
# x and y are data; a value_and_grad program (gradients under the same paths,
# no update) carries nothing and its params stay params
step=$SRCDIR/tests/data/hlo/jax_sgd_step.mlir
"$CARVE" import "$step" -o "$tmp/step.cir" --quiet 2>"$tmp/err" &&
  grep -q '^  param params.w : f32\[4, 8\]' "$tmp/step.cir" && grep -q '^  input x : f32\[16, 4\]' "$tmp/step.cir" &&
  grep -q '^  input y : f32\[16, 8\]' "$tmp/step.cir" && grep -q '^  return out, new.params.b, new.params.w$' "$tmp/step.cir" && ok ||
  bad "import jax_sgd_step: $(cat "$tmp/err") $(grep -E 'param|input|return' "$tmp/step.cir")"
cat >"$tmp/native.cir" <<'CIR'
model native {
  param params.b : f32[8] = normal(0.02)
  param params.w : f32[4, 8] = normal(0.02)
  input x : f32[16, 4]
  input y : f32[16, 8]
  d = sub(add(matmul(x, params.w), params.b), y)
  loss = mean(mul(d, d))
  return loss
}
CIR
for f in "$step" "$tmp/step.cir"; do
  a=$("$CARVE" run "$f" --steps 4 --json 2>"$tmp/err") && b=$("$CARVE" run "$tmp/native.cir" --train 'sgd(lr = 0.1)' --steps 4 --json 2>>"$tmp/err") &&
    python3 -c "
import json, sys
a, b = (json.loads(x)['losses'] for x in sys.argv[1:])
assert all(x > y for x, y in zip(a, a[1:])), a             # the losses move
assert all(abs(x - y) <= 1e-6 * abs(y) for x, y in zip(a, b)), (a, b)" "$a" "$b" 2>>"$tmp/err" && ok ||
    bad "the imported step iterated ($(basename "$f")): $(tail -3 "$tmp/err")"
done
out=$("$CARVE" run "$SRCDIR/tests/data/hlo/jax_value_and_grad.mlir" --steps 3 --json 2>"$tmp/err") &&
  python3 -c "import json, sys; l = json.loads(sys.argv[1])['losses']; sys.exit(0 if l[0] == l[1] == l[2] else 1)" "$out" &&
  "$CARVE" import "$SRCDIR/tests/data/hlo/jax_value_and_grad.mlir" -o "$tmp/vg.cir" --quiet 2>>"$tmp/err" &&
  grep -q '^  param params.w' "$tmp/vg.cir" && grep -q '^  input x' "$tmp/vg.cir" && ! grep -q 'new\.' "$tmp/vg.cir" && ok ||
  bad "value_and_grad carries nothing: $out $(cat "$tmp/err")"
# --check on the imported step under mpirun compares every output and every
# carried argument, and fails when one of them (not the loss) is wrong on a rank:
# split (the copies of the pieces put together) or replicated (the copies differ)
printf 'version 1\nmesh m = 2\ntactic t {\n  shard param "params.w" dim 1 on m\n}\nschedule t\n' >"$tmp/step.tac"
printf 'version 1\nmesh m = 2\ntactic t {\n  shard input "x" dim 0 on m\n}\nschedule t\n' >"$tmp/step_bp.tac"
for t in step.tac step_bp.tac; do
  out=$($MPIRUN -n 2 "$CARVE" run "$step" "$tmp/$t" --steps 3 --check --json 2>"$tmp/err") &&
    python3 -c "
import json, sys
j = json.loads(sys.argv[1])
assert j['max_rel_error'] <= 1e-5 and j['compared'] == {'steps': 3, 'outputs': 0, 'params': 2, 'states': 0, 'carried_args': 0}, j" "$out" 2>>"$tmp/err" && ok ||
    bad "--check of the imported step ($t): $out $(tail -3 "$tmp/err")"
  $MPIRUN -n 2 "$CARVE" run "$step" "$tmp/$t" --steps 3 --check --test-perturb new.params.w >"$tmp/out" 2>"$tmp/err"
  [ $? -eq 1 ] && grep -q "params.w" "$tmp/err" && ok || bad "--check must fail on a wrong new.params.w ($t): $(cat "$tmp/out" "$tmp/err" | grep -v '^--')"
done
# carve's own step exported and imported back: the same losses as carve's
"$CARVE" export "$SRCDIR/examples/mlp_small.cir" --train 'adam(lr = 1e-2)' -o "$tmp/mlp_step.mlir" >/dev/null 2>"$tmp/err" &&
  a=$("$CARVE" run "$tmp/mlp_step.mlir" --steps 3 --json 2>>"$tmp/err") &&
  b=$("$CARVE" run "$SRCDIR/examples/mlp_small.cir" --train 'adam(lr = 1e-2)' --steps 3 --json 2>>"$tmp/err") &&
  python3 -c "
import json, sys
a, b = (json.loads(x)['losses'] for x in sys.argv[1:])
assert a[2] < a[0] and all(abs(x - y) <= 1e-5 * abs(y) for x, y in zip(a, b)), (a, b)" "$a" "$b" 2>>"$tmp/err" && ok ||
  bad "carve's exported Adam step iterated: $(tail -3 "$tmp/err")"

# whatever import -o writes, check reads back, and it computes what the
# program computes, to the bit (every program of the corpus: the op tests,
# the JAX programs, the real models; integers beyond 2^53, the sign of a
# NaN and -2^63 included)
n=0
for f in "$SRCDIR"/tests/hlo/ops/*.mlir "$SRCDIR"/tests/data/hlo/*.mlir "$chess" "$bert" "$llama" "$nano"; do
  "$CARVE" import "$f" -o "$tmp/back.cir" --quiet 2>"$tmp/err" || { bad "import $(basename "$f"): $(head -2 "$tmp/err")"; continue; }
  "$CARVE" check "$tmp/back.cir" >/dev/null 2>"$tmp/err" || { bad "check what import -o wrote for $(basename "$f"): $(head -2 "$tmp/err")"; continue; }
  n=$((n + 1))
  case "$f" in */third_party/*) continue;; esac
  "$CARVE" run "$f" --steps 1 --allow-nonfinite --print-outputs --no-fuse 2>/dev/null | grep '^{' >"$tmp/a"
  "$CARVE" run "$tmp/back.cir" --steps 1 --allow-nonfinite --print-outputs --no-fuse 2>/dev/null | grep '^{' >"$tmp/b"
  [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" || bad "$(basename "$f"): the model file import -o wrote computes otherwise: $(diff "$tmp/a" "$tmp/b" | head -4)"
done
[ "$n" -ge 45 ] && ok || bad "only $n programs imported and read back"

echo "import: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
