#!/usr/bin/env bash
# gen_gpt.sh NAME LAYERS HEADS D HEAD_DIM VOCAB CONTEXT BATCH FFN "COMMENT" SCALE
# Writes a GPT-shaped model (the structure of examples/gpt2.cir) to stdout.
gen_gpt() { # name layers heads d headdim vocab ctx batch ffn comment scale
cat <<EOF
# ${10}
model $1 {
  input ids    : i32[$8, $7]
  input labels : i32[$8, $7]               # the next token at each position
  param wte : f32[$6, $4] = normal(0.02)    # token embedding, tied to the output projection
  param wpe : f32[$7, $4] = normal(0.01)    # learned positions

  x0 = add(embedding(wte, ids), wpe)
  repeat i in 0..$2 {
    # attention: heads are a dim of their own, so that tactics can split them
    param l{i}.ln1.g : f32[$4] = ones
    param l{i}.ln1.b : f32[$4] = zeros
    param l{i}.attn.wq : f32[$4, $3, $5]
    param l{i}.attn.wk : f32[$4, $3, $5]
    param l{i}.attn.wv : f32[$4, $3, $5]
    param l{i}.attn.wo : f32[$3, $5, $4]
    param l{i}.attn.bo : f32[$4] = zeros
    l{i}.a = layernorm(x{i}, l{i}.ln1.g, l{i}.ln1.b)
    l{i}.q = einsum("bsd,dhk->bhsk", l{i}.a, l{i}.attn.wq)
    l{i}.k = einsum("bsd,dhk->bhsk", l{i}.a, l{i}.attn.wk)
    l{i}.v = einsum("bsd,dhk->bhsk", l{i}.a, l{i}.attn.wv)
    l{i}.s = mul(einsum("bhqk,bhtk->bhqt", l{i}.q, l{i}.k), ${11})   # 1/sqrt(head dim)
    l{i}.p = softmax(causal_mask(l{i}.s))
    l{i}.c = einsum("bhqt,bhtk->bhqk", l{i}.p, l{i}.v)
    l{i}.o = add(einsum("bhqk,hkd->bqd", l{i}.c, l{i}.attn.wo), l{i}.attn.bo)
    l{i}.x = add(x{i}, l{i}.o)
    # MLP
    param l{i}.ln2.g : f32[$4] = ones
    param l{i}.ln2.b : f32[$4] = zeros
    param l{i}.mlp.w1 : f32[$4, $9]
    param l{i}.mlp.b1 : f32[$9] = zeros
    param l{i}.mlp.w2 : f32[$9, $4]
    param l{i}.mlp.b2 : f32[$4] = zeros
    l{i}.m = layernorm(l{i}.x, l{i}.ln2.g, l{i}.ln2.b)
    l{i}.h = gelu_tanh(add(matmul(l{i}.m, l{i}.mlp.w1), l{i}.mlp.b1))
    x{i+1} = add(l{i}.x, add(matmul(l{i}.h, l{i}.mlp.w2), l{i}.mlp.b2))
  }
  param lnf.g : f32[$4] = ones
  param lnf.b : f32[$4] = zeros
  xf     = layernorm(x$2, lnf.g, lnf.b)
  logits = einsum("bsd,vd->bsv", xf, wte)
  loss   = cross_entropy(logits, labels)
  return loss
}
EOF
}
gen_gpt "$@"
