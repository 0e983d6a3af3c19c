#!/usr/bin/env bash
# Programs written in primitive ops get carve's composite ops: a GPT loss
# in the spelling jax.jit(loss).lower(..).as_text() prints
# (tests/hlo/jax_gpt.py writes it at any size, without JAX) in each of its
# variants (flax's and a hand-written layer norm; gelu's tanh and erf
# forms; silu as sigmoid and as 1 / (1 + exp(-x))), and the real programs
# of shared/third_party. For each: which ops the rewrites made, and that
# the rewritten program computes what the program as written computes
# (--no-fuse): in f64 every output of two training steps (the loss, every
# new parameter) to 1e-10, the real programs' f32 outputs to 1e-6. Then
# growth with the layers, and a split run equal to one device.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
gen=$SRCDIR/tests/hlo/jax_gpt.py
fused() {  # FILE -> "N op" lines of the composite ops after the rewrites
  "$CARVE" check "$1" --print 2>/dev/null | grep -oE '= (softmax|log_softmax|layernorm|normalize|gelu|gelu_tanh|silu|attention|cross_entropy)\(' |
    sed 's/= //; s/($//' | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' '
}
agree() {  # A B TOL: every output within TOL (relative L2 of each tensor)
  python3 - "$@" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(p) if l.startswith("{")] for p in sys.argv[1:3])
assert len(a) == len(b) and a, (len(a), len(b))
for x, y in zip(a, b):
    assert x["name"] == y["name"] and x["shape"] == y["shape"], (x["name"], y["name"])
    num = sum((p - q) ** 2 for p, q in zip(x["values"], y["values"]))
    den = sum(q * q for q in y["values"]) or 1
    assert (num / den) ** 0.5 <= float(sys.argv[3]), (x["name"], (num / den) ** 0.5)
PY
}

for v in "flax gelu|2 attention 1 cross_entropy 2 gelu_tanh 5 layernorm" "plain silu|2 attention 1 cross_entropy 5 layernorm 2 silu" \
         "plain gelu_erf|2 attention 1 cross_entropy 2 gelu 5 layernorm" "flax silu_exp|2 attention 1 cross_entropy 5 layernorm 2 silu"; do
  set -- ${v%%|*}
  want=${v#*|}
  python3 "$gen" --norm "$1" --act "$2" --dtype f64 >"$tmp/g.mlir" || { bad "generate $1 $2"; continue; }
  got=$(fused "$tmp/g.mlir")
  [ "$got" = "$want " ] && ok || bad "$1 $2: fused '$got', wanted '$want'"
  "$CARVE" run "$tmp/g.mlir" --train 'sgd(lr = 0.5)' --steps 2 --print-outputs >"$tmp/a" 2>"$tmp/err" &&
    "$CARVE" run "$tmp/g.mlir" --train 'sgd(lr = 0.5)' --steps 2 --print-outputs --no-fuse >"$tmp/b" 2>>"$tmp/err" &&
    agree "$tmp/a" "$tmp/b" 1e-10 2>>"$tmp/err" && ok || bad "$1 $2: rewritten and as written differ: $(tail -2 "$tmp/err")"
done

# the real programs: chess (haiku layer norms, silu as 1 / (1 + exp(-x)),
# attention with v first), BERT (PyTorch's layer norms and softmax)
models=${STABLEHLO_MODELS:-$SRCDIR/../shared/third_party/stablehlo-models}
[ -d "$models" ] || models=/work/shared/third_party/stablehlo-models
if [ -d "$models" ]; then
  for v in "stablehlo-exports/searchless_chess_9m|8 attention 17 layernorm 1 log_softmax 8 silu" "stablehlo-exports/pt_bert|25 layernorm 12 softmax"; do
    f=$models/${v%%|*}.mlir want=${v#*|}
    got=$(fused "$f")
    [ "$got" = "$want " ] && ok || bad "$(basename "$f"): fused '$got', wanted '$want'"
    "$CARVE" run "$f" --steps 1 --print-outputs >"$tmp/a" 2>"$tmp/err" && "$CARVE" run "$f" --steps 1 --print-outputs --no-fuse >"$tmp/b" 2>>"$tmp/err" &&
      agree "$tmp/a" "$tmp/b" 1e-6 2>>"$tmp/err" && ok || bad "$(basename "$f"): rewritten and as written differ: $(tail -2 "$tmp/err")"
  done
fi

# growth: 8 layers make 4 times the ops of 2 (within the embedding and loss
# they share), every layer's attention fused
python3 "$gen" --layers 2 >"$tmp/l2.mlir" && python3 "$gen" --layers 8 >"$tmp/l8.mlir" &&
  o2=$("$CARVE" check "$tmp/l2.mlir" | grep -oE '[0-9]+ ops' | cut -d' ' -f1) && o8=$("$CARVE" check "$tmp/l8.mlir" | grep -oE '[0-9]+ ops' | cut -d' ' -f1) &&
  [ $(( (o8 - o2) * 2 )) -le $(( o2 * 8 )) ] && [[ "$(fused "$tmp/l8.mlir")" == *"8 attention"* ]] && ok || bad "growth: $o2 ops for 2 layers, $o8 for 8: $(fused "$tmp/l8.mlir")"

# the rewritten program split by batch on 2 ranks equals one device
printf 'version 1\nmesh b = 2\ntactic t {\n  shard inputs dim 0 on b\n}\nschedule t\n' >"$tmp/bp.tac"
out=$($MPIRUN -n 2 "$CARVE" run "$tmp/l2.mlir" "$tmp/bp.tac" --train 'adam(lr = 1e-3)' --steps 3 --check --json 2>"$tmp/err") &&
  python3 -c "import json, sys; sys.exit(0 if json.loads(sys.argv[1])['max_rel_error'] <= 1e-5 else 1)" "$out" && ok ||
  bad "batch split on 2 ranks: $out $(head -3 "$tmp/err")"

echo "fuse: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
