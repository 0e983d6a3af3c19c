#!/usr/bin/env python3
"""Write a GPT-2 style language model's loss as jax.jit(loss).lower(params,
tokens, labels).as_text() prints it, without JAX: the same ops in the same
spelling (broadcast_in_dim before every elementwise op, jnp.mean as a sum
and a divide, jax.nn.softmax and log_softmax with their max, layer norms
as flax and as hand-written code write them, gelu's tanh form with x**3 as
multiplies, the head split by reshape and einsum, a causal mask by iota and
select, optax's integer-label cross-entropy with logsumexp and
take_along_axis), at any size. Other spellings:
  --kv-heads K      grouped-query attention: k and v with K heads, repeated
                    to q's (jnp.repeat as broadcast_in_dim and reshape)
  --attn flax       flax.linen.dot_product_attention: q / sqrt(d) before the
                    einsum, make_causal_mask's float mask, finfo.min
  --attn dpa        jax.nn.dot_product_attention's XLA form: the scores times
                    the scale, and(true, tril) selected, -0.7 * finfo.max
  --attn-dtype bf16 (with dpa) bf16 q, k, v; f32 scores and softmax; the
                    probabilities cast to bf16
  --mask            select (each --attn's own), additive (where(tril, 0,
                    fill) added, as dot_product_attention's is_causal once
                    did), bias (a learned [T, T] bias added), none
  --mask-fill X     the mask's fill
  --loss onehot     optax.softmax_cross_entropy(logits, one_hot(labels)):
                    -sum(one_hot * log_softmax); onehot_f: float labels;
                    soft: the target an input distribution

usage: jax_gpt.py [--layers L] [--dim D] [--heads H] [--seq T] [--batch B]
                  [--vocab V] [--dtype f32|f64] [--norm flax|plain|rms|rms_pow] [--act gelu|gelu_erf|silu|silu_exp]
                  [--kv-heads K] [--attn einsum|flax|dpa] [--attn-dtype bf16] [--mask select|additive|bias|none]
                  [--mask-fill X] [--loss take|onehot|onehot_f|soft]
"""
import argparse
import struct
import sys

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=2)
p.add_argument("--dim", type=int, default=64)
p.add_argument("--heads", type=int, default=4)
p.add_argument("--seq", type=int, default=16)
p.add_argument("--batch", type=int, default=2)
p.add_argument("--vocab", type=int, default=96)
p.add_argument("--dtype", default="f32")
p.add_argument("--norm", default="flax", choices=["flax", "plain", "rms", "rms_pow"])
p.add_argument("--act", default="gelu", choices=["gelu", "gelu_erf", "silu", "silu_exp"])
p.add_argument("--kv-heads", type=int, default=0)          # grouped-query attention: k, v with fewer heads, jnp.repeat-ed
p.add_argument("--attn", default="einsum", choices=["einsum", "flax", "dpa"])
p.add_argument("--attn-dtype", default=None, choices=["bf16"])   # dpa on bf16 q, k, v (the model in f32)
p.add_argument("--mask", default="select", choices=["select", "additive", "bias", "none"])
p.add_argument("--mask-fill", default=None)
p.add_argument("--loss", default="take", choices=["take", "onehot", "onehot_f", "soft"])
a = p.parse_args()
L, D, H, T, B, V, F = a.layers, a.dim, a.heads, a.seq, a.batch, a.vocab, a.dtype
HD = D // H
KV = a.kv_heads or H
assert H % KV == 0 and (a.attn_dtype is None or (a.attn == "dpa" and F == "f32"))

out = []
n = [0]


def t(*shape, dt=None):
    return "tensor<" + "".join(f"{d}x" for d in shape) + (dt or F) + ">"


def new():
    n[0] += 1
    return f"%{n[0]}"


def emit(s):
    out.append("    " + s)


def const(x, dt=None):
    v = new()
    emit(f"{v} = stablehlo.constant dense<{x}> : {t(dt=dt)}")
    return v


def bcast(x, src, dst, dims, dt=None):
    v = new()
    emit(f"{v} = stablehlo.broadcast_in_dim {x}, dims = [{', '.join(map(str, dims))}] : ({t(*src, dt=dt)}) -> {t(*dst, dt=dt)}")
    return v


def splat(x, shape, dt=None):
    return bcast(const(x, dt), [], shape, [], dt)


def ew(op, a, b, shape, dt=None):
    v = new()
    emit(f"{v} = stablehlo.{op} {a}, {b} : {t(*shape, dt=dt)}")
    return v


def cmp(d, a, b, shape, typ, dt):
    v = new()
    emit(f"{v} = stablehlo.compare  {d}, {a}, {b},  {typ} : ({t(*shape, dt=dt)}, {t(*shape, dt=dt)}) -> {t(*shape, dt='i1')}")
    return v


def un(op, a, shape):
    v = new()
    emit(f"{v} = stablehlo.{op} {a} : {t(*shape)}")
    return v


def reduce(x, shape, dim, op, init):
    c = const(init)
    res = [s for i, s in enumerate(shape) if i != dim]
    v = new()
    emit(f"{v} = stablehlo.reduce({x} init: {c}) applies stablehlo.{op} across dimensions = [{dim}] : ({t(*shape)}, {t()}) -> {t(*res)}")
    return v, res


def keep(x, res, shape, dim):
    """x reduced over dim, back to shape: [.., 1] then broadcast (jnp's keepdims)"""
    kd = list(shape)
    kd[dim] = 1
    y = bcast(x, res, kd, [i for i in range(len(shape)) if i != dim])
    return bcast(y, kd, shape, list(range(len(shape)))), kd


def mean_keep(x, shape, dim):
    s, res = reduce(x, shape, dim, "add", "0.000000e+00")
    kd = list(shape)
    kd[dim] = 1
    y = bcast(s, res, kd, [i for i in range(len(shape)) if i != dim])
    return ew("divide", y, splat(f"{float(shape[dim]):e}", kd), kd), kd


def full(x, kd, shape):
    return bcast(x, kd, shape, list(range(len(shape))))


def dot(x, w, xs, ws, rs, spec):
    v = new()
    emit(f"{v} = stablehlo.dot_general {x}, {w}, {spec} : ({t(*xs)}, {t(*ws)}) -> {t(*rs)}")
    return v


def linear(x, w, b, shape, dout):
    rs = shape[:-1] + [dout]
    y = dot(x, w, shape, [shape[-1], dout], rs, f"contracting_dims = [{len(shape) - 1}] x [0]")
    if b is None:
        return y, rs
    return ew("add", y, bcast(b, [dout], rs, [len(rs) - 1]), rs), rs


def layernorm(x, g, bb, shape):
    d = len(shape) - 1
    if a.norm == "rms":            # flax.linen.RMSNorm: x * (rsqrt(mean(x^2) + eps) * scale)
        ms, kd = mean_keep(ew("multiply", x, x, shape), shape, d)
        r = un("rsqrt", ew("add", ms, splat("9.99999997E-7", kd), kd), kd)
        return ew("multiply", x, ew("multiply", full(r, kd, shape), bcast(g, [shape[-1]], shape, [d]), shape), shape)
    if a.norm == "rms_pow":        # Llama's by hand: g * (x / sqrt(mean(x ** 2) + eps))
        ms, kd = mean_keep(ew("power", x, splat("2.000000e+00", shape), shape), shape, d)
        y = ew("divide", x, full(un("sqrt", ew("add", ms, splat("1.000000e-05", kd), kd), kd), kd, shape), shape)
        return ew("multiply", bcast(g, [shape[-1]], shape, [d]), y, shape)
    if a.norm == "flax":           # flax.linen.LayerNorm: fast variance, rsqrt(var + eps) * scale
        m, kd = mean_keep(x, shape, d)
        m2, _ = mean_keep(ew("multiply", x, x, shape), shape, d)
        var = ew("maximum", splat("0.000000e+00", kd), ew("subtract", m2, ew("multiply", m, m, kd), kd), kd)
        r = un("rsqrt", ew("add", var, splat("9.99999997E-7", kd), kd), kd)
        mul = ew("multiply", full(r, kd, shape), bcast(g, [shape[-1]], shape, [d]), shape)
        y = ew("multiply", ew("subtract", x, full(m, kd, shape), shape), mul, shape)
        return ew("add", y, bcast(bb, [shape[-1]], shape, [d]), shape)
    m, kd = mean_keep(x, shape, d)      # hand-written: (x - m) / sqrt(var + eps) * g + b
    c = ew("subtract", x, full(m, kd, shape), shape)
    var, _ = mean_keep(ew("multiply", c, c, shape), shape, d)
    sd = un("sqrt", ew("add", var, splat("1.000000e-05", kd), kd), kd)
    y = ew("divide", c, full(sd, kd, shape), shape)
    return ew("add", ew("multiply", y, bcast(g, [shape[-1]], shape, [d]), shape), bcast(bb, [shape[-1]], shape, [d]), shape)


def softmax(x, shape, dim):
    m, res = reduce(x, shape, dim, "maximum", "0xFF800000" if F == "f32" else "0xFFF0000000000000")
    m = ew("maximum", splat("0xFF800000" if F == "f32" else "0xFFF0000000000000", res), m, res)
    mb, _ = keep(m, res, shape, dim)
    e = un("exponential", ew("subtract", x, mb, shape), shape)
    s, res = reduce(e, shape, dim, "add", "0.000000e+00")
    sb, _ = keep(s, res, shape, dim)
    return ew("divide", e, sb, shape)


def act(x, shape):
    if a.act == "silu":            # jax.nn.silu: x * sigmoid(x)
        return ew("multiply", x, un("logistic", x, shape), shape)
    if a.act == "silu_exp":        # x * (1 / (1 + exp(-x))), as older JAX lowers expit
        e = un("exponential", un("negate", x, shape), shape)
        return ew("multiply", x, ew("divide", splat("1.000000e+00", shape), ew("add", splat("1.000000e+00", shape), e, shape), shape), shape)
    if a.act == "gelu_erf":        # jax.nn.gelu(approximate=False): x * (erf(x / sqrt(2)) + 1) / 2
        er = new()
        emit(f"{er} = chlo.erf {ew('divide', x, splat('1.41421354', shape), shape)} : {t(*shape)} -> {t(*shape)}")
        y = ew("multiply", x, ew("add", er, splat("1.000000e+00", shape), shape), shape)
        return ew("divide", y, splat("2.000000e+00", shape), shape)
    x3 = ew("multiply", x, ew("multiply", x, x, shape), shape)       # x ** 3
    inner = ew("add", x, ew("multiply", splat("4.471500e-02", shape), x3, shape), shape)
    th = un("tanh", ew("multiply", splat("0.797884583", shape), inner, shape), shape)
    cdf = ew("multiply", splat("5.000000e-01", shape), ew("add", splat("1.000000e+00", shape), th, shape), shape)
    return ew("multiply", x, cdf, shape)


def repeat_heads(x):
    """jnp.repeat(x, H // KV, axis=2) as broadcast_in_dim and reshape (k, v of grouped-query attention)"""
    if KV == H:
        return x
    y = bcast(x, [B, T, KV, HD], [B, T, KV, H // KV, HD], [0, 1, 2, 4])
    r = new()
    emit(f"{r} = stablehlo.reshape {y} : ({t(B, T, KV, H // KV, HD)}) -> {t(B, T, H, HD)}")
    return r


def f32_bits(x):                # a float as f32 rounds it, printed as MLIR prints an f32
    return f"{struct.unpack('f', struct.pack('f', x))[0]:.8E}"


FMIN = f32_bits(-3.4028234663852886e38) if F == "f32" else "-1.7976931348623157E+308"   # jnp.finfo(dtype).min
FNEG = f32_bits(-0.7 * 3.4028234663852886e38) if F == "f32" else repr(-0.7 * sys.float_info.max)   # -0.7 * finfo.max


def tril_bool():
    """jnp.tril(jnp.ones((T, T), bool)): select(iota0 + 0 >= iota1, true, false)"""
    i0, i1 = new(), new()
    emit(f"{i0} = stablehlo.iota dim = 0 : {t(T, T, dt='i32')}")
    sh = ew("add", i0, splat("0", [T, T], "i32"), [T, T], "i32")
    emit(f"{i1} = stablehlo.iota dim = 1 : {t(T, T, dt='i32')}")
    ge = cmp("GE", sh, i1, [T, T], "SIGNED", "i32")
    v = new()
    emit(f"{v} = stablehlo.select {ge}, {splat('true', [T, T], 'i1')}, {splat('false', [T, T], 'i1')} : {t(T, T, dt='i1')}, {t(T, T, dt='i1')}")
    return v


def flax_causal():
    """flax.linen.make_causal_mask: arange's positions compared pairwise, [B, 1, T, T] in f32"""
    io = new()
    emit(f"{io} = stablehlo.iota dim = 0 : {t(T, dt='i32')}")
    idx = bcast(io, [T], [B, T], [1], "i32")
    qi = bcast(bcast(idx, [B, T], [B, T, 1], [0, 1], "i32"), [B, T, 1], [B, T, T], [0, 1, 2], "i32")
    ki = bcast(bcast(idx, [B, T], [B, 1, T], [0, 2], "i32"), [B, 1, T], [B, T, T], [0, 1, 2], "i32")
    ge = cmp("GE", qi, ki, [B, T, T], "SIGNED", "i32")
    m = bcast(ge, [B, T, T], [B, 1, T, T], [0, 2, 3], "i1")
    v = new()
    emit(f"{v} = stablehlo.convert {m} : ({t(B, 1, T, T, dt='i1')}) -> {t(B, 1, T, T)}")
    return v


def mask_scores(sc, ly, S4):
    """the mask each spelling applies to the scaled scores"""
    fill = a.mask_fill or {"einsum": "-1.000000e+09", "flax": FMIN, "dpa": FNEG}[a.attn]
    if a.mask == "none":
        return sc
    if a.mask == "bias":                  # a learned [T, T] bias added (not a mask)
        return ew("add", sc, bcast(param(ly["P"] + "['attn']['bias']", T, T), [T, T], S4, [2, 3]), S4)
    if a.mask == "additive":              # jax.nn.dot_product_attention(is_causal=True) in earlier JAX: logits + mask
        m = new()
        emit(f"{m} = stablehlo.select {tril_bool()}, {splat('0.000000e+00', [T, T])}, {splat(fill, [T, T])} : {t(T, T, dt='i1')}, {t(T, T)}")
        m = bcast(m, [T, T], [1, 1, T, T], [2, 3])
        return ew("add", sc, bcast(m, [1, 1, T, T], S4, [0, 1, 2, 3]), S4)
    if a.attn == "flax":                  # jnp.where(mask, w, finfo.min), the mask a float from make_causal_mask
        fm = flax_causal()
        nz = cmp("NE", fm, splat("0.000000e+00", [B, 1, T, T]), [B, 1, T, T], "FLOAT", None)
        pred = bcast(nz, [B, 1, T, T], S4, [0, 1, 2, 3], "i1")
    elif a.attn == "dpa":                 # logical_and(ones_like(logits, bool), tril(ones)[None, None])
        tb = bcast(bcast(tril_bool(), [T, T], [1, 1, T, T], [2, 3], "i1"), [1, 1, T, T], S4, [0, 1, 2, 3], "i1")
        pred = new()
        emit(f"{pred} = stablehlo.and {splat('true', S4, 'i1')}, {tb} : {t(*S4, dt='i1')}")
    else:                                 # the hand-written GPT's iota comparison
        i0, i1 = new(), new()
        emit(f"{i0} = stablehlo.iota dim = 0 : {t(T, T, dt='i32')}")
        emit(f"{i1} = stablehlo.iota dim = 1 : {t(T, T, dt='i32')}")
        pred = bcast(cmp("GE", i0, i1, [T, T], "SIGNED", "i32"), [T, T], S4, [2, 3], "i1")
    v = new()
    emit(f"{v} = stablehlo.select {pred}, {sc}, {splat(fill, S4)} : {t(*S4, dt='i1')}, {t(*S4)}")
    return v


def attention(q, kk, vv, ly):
    """softmax(q k^T * scale + mask) v on [B, T, H, HD], heads after the sequence:
    einsum   the hand-written GPT: scores / sqrt(HD)
    flax     flax.linen.dot_product_attention: q / sqrt(HD) before the einsum
    dpa      jax.nn.dot_product_attention (XLA): scores * scale, the softmax in f32
             (with --attn-dtype bf16: bf16 q, k, v, f32 scores, the probabilities cast back)"""
    S4, QS = [B, H, T, T], [B, T, H, HD]
    lo = a.attn_dtype or F
    if a.attn_dtype:
        cq = []
        for x in (q, kk, vv):
            c = new()
            emit(f"{c} = stablehlo.convert {x} : ({t(*QS)}) -> {t(*QS, dt=lo)}")
            cq.append(c)
        q, kk, vv = cq
    if a.attn == "flax":
        q = ew("divide", q, splat(f"{HD ** 0.5:e}", QS), QS)
    s = new()
    emit(f"{s} = stablehlo.dot_general {q}, {kk}, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : "
         f"({t(*QS, dt=lo)}, {t(*QS, dt=lo)}) -> {t(*S4)}")
    if a.attn == "einsum":
        s = ew("divide", s, splat(f"{HD ** 0.5:e}", S4), S4)
    elif a.attn == "dpa":
        s = ew("multiply", s, splat(f32_bits(HD ** -0.5) if F == "f32" else repr(HD ** -0.5), S4), S4)
    pr = softmax(mask_scores(s, ly, S4), S4, 3)
    if a.attn_dtype:
        c = new()
        emit(f"{c} = stablehlo.convert {pr} : ({t(*S4)}) -> {t(*S4, dt=lo)}")
        pr = c
    c = new()
    emit(f"{c} = stablehlo.dot_general {pr}, {vv}, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : "
         f"({t(*S4, dt=lo)}, {t(*QS, dt=lo)}) -> {t(B, H, T, HD, dt=lo)}")
    tr = new()
    emit(f"{tr} = stablehlo.transpose {c}, dims = [0, 2, 1, 3] : ({t(B, H, T, HD, dt=lo)}) -> {t(*QS, dt=lo)}")
    c2 = new()
    emit(f"{c2} = stablehlo.reshape {tr} : ({t(*QS, dt=lo)}) -> {t(B, T, D, dt=lo)}")
    if a.attn_dtype:
        c = new()
        emit(f"{c} = stablehlo.convert {c2} : ({t(B, T, D, dt=lo)}) -> {t(B, T, D)}")
        c2 = c
    return c2


args = []                       # (name, type, path)


def param(path, *shape):
    args.append((f"%arg{len(args)}", t(*shape), path))
    return args[-1][0]


def bias(path, *shape):          # an RMS norm has no bias
    return None if a.norm.startswith("rms") and path.endswith("['bias']") else param(path, *shape)


wte, wpe = param("params['wte']", V, D), param("params['wpe']", T, D)
layers = []
for i in range(L):
    P = f"params['h_{i}']"
    layers.append(dict(P=P, g1=param(P + "['ln_1']['scale']", D), b1=bias(P + "['ln_1']['bias']", D),
                       qkv=param(P + "['attn']['c_attn']['kernel']", D, D + 2 * KV * HD), qkvb=param(P + "['attn']['c_attn']['bias']", D + 2 * KV * HD),
                       o=param(P + "['attn']['c_proj']['kernel']", D, D), ob=param(P + "['attn']['c_proj']['bias']", D),
                       g2=param(P + "['ln_2']['scale']", D), b2=bias(P + "['ln_2']['bias']", D),
                       fc=param(P + "['mlp']['c_fc']['kernel']", D, 4 * D), fcb=param(P + "['mlp']['c_fc']['bias']", 4 * D),
                       pr=param(P + "['mlp']['c_proj']['kernel']", 4 * D, D), prb=param(P + "['mlp']['c_proj']['bias']", D)))
gf, bf = param("params['ln_f']['scale']", D), bias("params['ln_f']['bias']", D)
args.append((f"%arg{len(args)}", t(B, T, dt="i32"), "tokens"))
tok = args[-1][0]
args.append((f"%arg{len(args)}", t(B, T, V) if a.loss == "soft" else t(B, T, dt=F if a.loss == "onehot_f" else "i32"), "labels"))
lab = args[-1][0]

# x = wte[tokens] + wpe (jnp indexing: negative ids wrap)
lt = cmp("LT", tok, splat("0", [B, T], "i32"), [B, T], "SIGNED", "i32")
wrap = ew("add", tok, splat(str(V), [B, T], "i32"), [B, T], "i32")
idx = new()
emit(f"{idx} = stablehlo.select {lt}, {wrap}, {tok} : {t(B, T, dt='i1')}, {t(B, T, dt='i32')}")
idx3 = bcast(idx, [B, T], [B, T, 1], [0, 1], "i32")
x = new()
emit(f"{x} = \"stablehlo.gather\"({wte}, {idx3}) <{{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], "
     f"start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, {D}>}}> : ({t(V, D)}, {t(B, T, 1, dt='i32')}) -> {t(B, T, D)}")
x = ew("add", x, bcast(wpe, [T, D], [B, T, D], [1, 2]), [B, T, D])
S = [B, T, D]
for ly in layers:
    h = layernorm(x, ly["g1"], ly["b1"], S)
    qkv, qs = linear(h, ly["qkv"], ly["qkvb"], S, D + 2 * KV * HD)
    parts = []
    for lo, n_ in ((0, H), (D, KV), (D + KV * HD, KV)):    # jnp.split(qkv, [D, D + KV * HD], axis=-1)
        v = new()
        emit(f"{v} = stablehlo.slice {qkv} [0:{B}, 0:{T}, {lo}:{lo + n_ * HD}] : ({t(*qs)}) -> {t(B, T, n_ * HD)}")
        r = new()
        emit(f"{r} = stablehlo.reshape {v} : ({t(B, T, n_ * HD)}) -> {t(B, T, n_, HD)}")
        parts.append(r)
    q, kk, vv = parts[0], repeat_heads(parts[1]), repeat_heads(parts[2])
    c2 = attention(q, kk, vv, ly)
    o, _ = linear(c2, ly["o"], ly["ob"], S, D)
    x = ew("add", x, o, S)
    h = layernorm(x, ly["g2"], ly["b2"], S)
    f, fs = linear(h, ly["fc"], ly["fcb"], S, 4 * D)
    f = act(f, fs)
    o, _ = linear(f, ly["pr"], ly["prb"], fs, D)
    x = ew("add", x, o, S)
h = layernorm(x, gf, bf, S)
logits = dot(h, wte, S, [V, D], [B, T, V], "contracting_dims = [2] x [1]")     # tied: h @ wte.T

LS = [B, T, V]


def take_loss(logits):
    amax, res = reduce(logits, LS, 2, "maximum", "0xFF800000" if F == "f32" else "0xFFF0000000000000")
    amax = ew("maximum", splat("0xFF800000" if F == "f32" else "0xFFF0000000000000", res), amax, res)
    ab = new()
    emit(f"{ab} = stablehlo.abs {amax} : {t(*res)}")
    fin = cmp("LT", ab, splat("0x7F800000" if F == "f32" else "0x7FF0000000000000", res), res, "FLOAT", None)
    am = new()
    emit(f"{am} = stablehlo.select {fin}, {amax}, {splat('0.000000e+00', res)} : {t(*res, dt='i1')}, {t(*res)}")
    amb, _ = keep(am, res, LS, 2)
    e = un("exponential", ew("subtract", logits, amb, LS), LS)
    se, _ = reduce(e, LS, 2, "add", "0.000000e+00")
    lse = ew("add", un("log", se, res), am, res)
    lt = cmp("LT", lab, splat("0", [B, T], "i32"), [B, T], "SIGNED", "i32")
    wrap = ew("add", lab, splat(str(V), [B, T], "i32"), [B, T], "i32")
    li = new()
    emit(f"{li} = stablehlo.select {lt}, {wrap}, {lab} : {t(B, T, dt='i1')}, {t(B, T, dt='i32')}")
    li4 = bcast(li, [B, T], [B, T, 1, 1], [0, 1], "i32")
    g = new()
    emit(f"{g} = \"stablehlo.gather\"({logits}, {li4}) <{{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], "
         f"start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}}> "
         f": ({t(*LS)}, {t(B, T, 1, 1, dt='i32')}) -> {t(B, T, 1)}")
    g2 = new()
    emit(f"{g2} = stablehlo.reshape {g} : ({t(B, T, 1)}) -> {t(B, T)}")
    nll = ew("subtract", lse, g2, [B, T])
    tot, _ = reduce(nll, [B, T], 1, "add", "0.000000e+00")
    tot2 = new()
    c0 = const("0.000000e+00")
    emit(f"{tot2} = stablehlo.reduce({tot} init: {c0}) applies stablehlo.add across dimensions = [0] : ({t(B)}, {t()}) -> {t()}")
    return ew("divide", tot2, const(f"{float(B * T):e}"), [])


def onehot_loss(logits):
    """optax.softmax_cross_entropy(logits, jax.nn.one_hot(labels, V)).mean(): -sum(one_hot * log_softmax) per
    position; onehot_f: the labels floats (jax.nn.one_hot compares them with a float iota); soft: the target
    any distribution (an input)"""
    m, res = reduce(logits, LS, 2, "maximum", "0xFF800000" if F == "f32" else "0xFFF0000000000000")
    m = ew("maximum", splat("0xFF800000" if F == "f32" else "0xFFF0000000000000", res), m, res)
    sh = ew("subtract", logits, full(bcast(m, res, [B, T, 1], [0, 1]), [B, T, 1], LS), LS)
    se, _ = reduce(un("exponential", sh, LS), LS, 2, "add", "0.000000e+00")
    ls = ew("subtract", sh, full(un("log", bcast(se, res, [B, T, 1], [0, 1]), [B, T, 1]), [B, T, 1], LS), LS)
    if a.loss == "soft":
        oh = lab
    else:
        lt = "i32" if a.loss == "onehot" else F
        io = new()
        emit(f"{io} = stablehlo.iota dim = 2 : {t(1, 1, V, dt=lt)}")
        eq = cmp("EQ", bcast(bcast(lab, [B, T], [B, T, 1], [0, 1], lt), [B, T, 1], LS, [0, 1, 2], lt),
                 bcast(io, [1, 1, V], LS, [0, 1, 2], lt), LS, "SIGNED" if lt == "i32" else "FLOAT", lt)
        oh = new()
        emit(f"{oh} = stablehlo.convert {eq} : ({t(*LS, dt='i1')}) -> {t(*LS)}")
    nll, _ = reduce(ew("multiply", oh, ls, LS), LS, 2, "add", "0.000000e+00")
    nll = un("negate", nll, [B, T])
    tot = new()
    c0 = const("0.000000e+00")
    emit(f"{tot} = stablehlo.reduce({nll} init: {c0}) applies stablehlo.add across dimensions = [0, 1] : ({t(B, T)}, {t()}) -> {t()}")
    return ew("divide", tot, const(f"{float(B * T):e}"), [])


if a.loss != "take":
    loss = onehot_loss(logits)
else:                           # optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    loss = take_loss(logits)

sig = ", ".join(f"{nm}: {ty} {{jax.arg_info = \"{pa}\", mhlo.layout_mode = \"default\", mhlo.sharding = \"{{replicated}}\"}}" for nm, ty, pa in args)
print("module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {")
print(f"  func.func public @main({sig}) -> ({t()} {{jax.result_info = \"\", mhlo.layout_mode = \"default\"}}) {{")
print("\n".join(out))
print(f"    return {loss} : {t()}")
print("  }")
print("}")
