#!/usr/bin/env bash
# Programs written in primitive ops get carve's composite ops: a GPT loss
# in the spelling jax.jit(loss).lower(..).as_text() prints
# (tests/hlo/jax_gpt.py writes it at any size, without JAX) in each of its
# variants (flax's and a hand-written layer norm, flax's RMS norm and
# Llama's with x ** 2 and a division by the root; gelu's tanh and erf
# forms; silu as sigmoid and as 1 / (1 + exp(-x)); attention's and the
# loss's spellings, and near misses that stay as written), the Llama
# block's spelling (tests/hlo/torch_attn.py), and the real programs of
# shared/third_party. For each: which ops the rewrites made, and that the
# rewritten program computes what the program as written computes
# (--no-fuse): in f64 every output of two training steps (the loss, every
# new parameter) to 1e-10, the real programs' f32 outputs to 1e-6 (bf16
# ones to bf16's precision). Then growth with the layers, and a split run
# equal to one device.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
gen=$SRCDIR/tests/hlo/jax_gpt.py
fused() {  # FILE -> "N op" lines of the composite ops after the rewrites
  "$CARVE" check "$1" --print 2>/dev/null | grep -oE '= (softmax|log_softmax|layernorm|rmsnorm|normalize|gelu|gelu_tanh|silu|attention|cross_entropy)\(' |
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
fuses() {  # FILE WANT NAME: the rewrites make the ops WANT
  local got; got=$(fused "$1")
  [ "$got" = "$2 " ] && ok || bad "$3: fused '$got', wanted '$2'"
}
as_written() {  # FILE TOL NAME [RUN OPTIONS]: the rewritten program's outputs are the program's as written (--no-fuse)
  local f=$1 tol=$2 name=$3; shift 3
  "$CARVE" run "$f" "$@" --print-outputs >"$tmp/a" 2>"$tmp/err" && "$CARVE" run "$f" "$@" --print-outputs --no-fuse >"$tmp/b" 2>>"$tmp/err" &&
    agree "$tmp/a" "$tmp/b" "$tol" 2>>"$tmp/err" && ok || bad "$name: rewritten and as written differ: $(tail -2 "$tmp/err")"
}

for v in "flax gelu|2 attention 1 cross_entropy 2 gelu_tanh 5 layernorm" "plain silu|2 attention 1 cross_entropy 5 layernorm 2 silu" \
         "plain gelu_erf|2 attention 1 cross_entropy 2 gelu 5 layernorm" "flax silu_exp|2 attention 1 cross_entropy 5 layernorm 2 silu" \
         "rms silu|2 attention 1 cross_entropy 5 rmsnorm 2 silu" "rms_pow gelu|2 attention 1 cross_entropy 2 gelu_tanh 5 rmsnorm"; do
  set -- ${v%%|*}
  want=${v#*|}
  python3 "$gen" --norm "$1" --act "$2" --dtype f64 >"$tmp/g.mlir" || { bad "generate $1 $2"; continue; }
  fuses "$tmp/g.mlir" "$want" "$1 $2"
  as_written "$tmp/g.mlir" 1e-10 "$1 $2" --train 'sgd(lr = 0.5)' --steps 2
done

# attention and the loss as other code spells them (jax_gpt.py's options),
# and near misses that must stay as written (a softmax, a log_softmax):
# grouped-query k and v repeated (jnp.repeat), flax's attention (q / sqrt(d)
# before the einsum, make_causal_mask's float mask != 0),
# jax.nn.dot_product_attention's (the scale multiplied; and(true, tril)
# selected, or, in earlier JAX, where(tril, 0, -0.7 max) added), an added
# mask in the hand-written GPT, optax's one-hot cross-entropy; a fill of -1
# (selected or added), a learned bias added, float labels, a soft target
ops="2 gelu_tanh 5 layernorm"
for v in "--kv-heads 2|2 attention 1 cross_entropy $ops" "--attn flax --kv-heads 1|2 attention 1 cross_entropy $ops" \
         "--attn dpa|2 attention 1 cross_entropy $ops" "--attn dpa --mask additive --kv-heads 2|2 attention 1 cross_entropy $ops" \
         "--mask additive|2 attention 1 cross_entropy $ops" "--loss onehot --attn flax|2 attention 1 cross_entropy $ops" \
         "--mask-fill -1|1 cross_entropy $ops 2 softmax" "--mask additive --mask-fill -1|1 cross_entropy $ops 2 softmax" \
         "--mask bias|1 cross_entropy $ops 2 softmax" "--loss onehot_f|2 attention $ops 1 log_softmax" \
         "--loss soft|2 attention $ops 1 log_softmax"; do
  opts=${v%%|*} want=${v#*|}
  python3 "$gen" $opts --dtype f64 >"$tmp/g.mlir" || { bad "generate $opts"; continue; }
  fuses "$tmp/g.mlir" "$want" "$opts"
  as_written "$tmp/g.mlir" 1e-10 "$opts" --train 'sgd(lr = 0.5)' --steps 2
done
# bf16 q, k, v into jax.nn.dot_product_attention: f32 scores and softmax,
# the probabilities cast to bf16; the attention runs in f32 between casts.
# The loss agrees to f32's precision; the gradients to bf16's (the program
# as written rounds the probabilities' gradient to bf16, carve's does not)
if python3 "$gen" --attn dpa --attn-dtype bf16 --kv-heads 2 >"$tmp/g.mlir"; then
  fuses "$tmp/g.mlir" "2 attention 1 cross_entropy $ops" "dpa bf16"
  as_written "$tmp/g.mlir" 1e-5 "dpa bf16 forward" --steps 2
  as_written "$tmp/g.mlir" 1e-3 "dpa bf16 training" --train 'sgd(lr = 0.5)' --steps 2
else bad "generate dpa bf16"; fi

# PyTorch's spelling, the Llama block's (tests/hlo/torch_attn.py): heads
# before the sequence, q and k^T each scaled, k and v repeated (repeat_kv),
# the mask added, PyTorch's guard of rows with no key; bf16 weights and
# output, so the two agree to bf16's precision. Its causal mask from
# triu(1) becomes attention; a mask that is an input (as in the real
# block) or triu(0) (a query not seeing itself) leaves the softmax
for v in "--mask causal|1 attention" "--mask input|1 softmax" "--triu 0|1 softmax"; do
  opts=${v%%|*} want=${v#*|}
  python3 "$SRCDIR/tests/hlo/torch_attn.py" $opts >"$tmp/t.mlir" || { bad "generate torch $opts"; continue; }
  fuses "$tmp/t.mlir" "$want" "torch $opts"
  as_written "$tmp/t.mlir" 4e-3 "torch $opts" --steps 1
done

# the real programs: chess (haiku layer norms, silu as 1 / (1 + exp(-x)),
# attention with v first), BERT (PyTorch's layer norms and softmax; its
# mask an input, added), the Llama block (its softmax; the mask an input
# added, so no attention; its bf16 output agrees to bf16's precision)
models=${STABLEHLO_MODELS:-$SRCDIR/../shared/third_party/stablehlo-models}
[ -d "$models" ] || models=/work/shared/third_party/stablehlo-models
if [ -d "$models" ]; then
  for v in "stablehlo-exports/searchless_chess_9m|8 attention 17 layernorm 1 log_softmax 8 silu|1e-6" "stablehlo-exports/pt_bert|25 layernorm 12 softmax|1e-6" \
           "tt-mlir/sdy_llama_attn_prefill_manual|1 softmax|4e-3"; do
    f=$models/${v%%|*}.mlir want=${v#*|} tol=${v##*|}
    want=${want%|*}
    fuses "$f" "$want" "$(basename "$f")"
    as_written "$f" "$tol" "$(basename "$f")" --steps 1
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
