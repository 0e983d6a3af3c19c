#!/usr/bin/env python3
"""Write a GPT-2 style language model's loss as jax.jit(loss).lower(params,
tokens, labels).as_text() prints it, without JAX: the same ops in the same
spelling (broadcast_in_dim before every elementwise op, jnp.mean as a sum
and a divide, jax.nn.softmax and log_softmax with their max, layer norms
as flax and as hand-written code write them, gelu's tanh form with x**3 as
multiplies, the head split by reshape and einsum, a causal mask by iota and
select, optax's integer-label cross-entropy with logsumexp and
take_along_axis), at any size.

usage: jax_gpt.py [--layers L] [--dim D] [--heads H] [--seq T] [--batch B]
                  [--vocab V] [--dtype f32|f64] [--norm flax|plain] [--act gelu|gelu_erf|silu|silu_exp]
"""
import argparse

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=2)
p.add_argument("--dim", type=int, default=64)
p.add_argument("--heads", type=int, default=4)
p.add_argument("--seq", type=int, default=16)
p.add_argument("--batch", type=int, default=2)
p.add_argument("--vocab", type=int, default=96)
p.add_argument("--dtype", default="f32")
p.add_argument("--norm", default="flax", choices=["flax", "plain"])
p.add_argument("--act", default="gelu", choices=["gelu", "gelu_erf", "silu", "silu_exp"])
a = p.parse_args()
L, D, H, T, B, V, F = a.layers, a.dim, a.heads, a.seq, a.batch, a.vocab, a.dtype
HD = D // H

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


args = []                       # (name, type, path)


def param(path, *shape):
    args.append((f"%arg{len(args)}", t(*shape), path))
    return args[-1][0]


wte, wpe = param("params['wte']", V, D), param("params['wpe']", T, D)
layers = []
for i in range(L):
    P = f"params['h_{i}']"
    layers.append(dict(g1=param(P + "['ln_1']['scale']", D), b1=param(P + "['ln_1']['bias']", D),
                       qkv=param(P + "['attn']['c_attn']['kernel']", D, 3 * D), qkvb=param(P + "['attn']['c_attn']['bias']", 3 * D),
                       o=param(P + "['attn']['c_proj']['kernel']", D, D), ob=param(P + "['attn']['c_proj']['bias']", D),
                       g2=param(P + "['ln_2']['scale']", D), b2=param(P + "['ln_2']['bias']", D),
                       fc=param(P + "['mlp']['c_fc']['kernel']", D, 4 * D), fcb=param(P + "['mlp']['c_fc']['bias']", 4 * D),
                       pr=param(P + "['mlp']['c_proj']['kernel']", 4 * D, D), prb=param(P + "['mlp']['c_proj']['bias']", D)))
gf, bf = param("params['ln_f']['scale']", D), param("params['ln_f']['bias']", D)
args.append((f"%arg{len(args)}", t(B, T, dt="i32"), "tokens"))
tok = args[-1][0]
args.append((f"%arg{len(args)}", t(B, T, dt="i32"), "labels"))
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
    qkv, qs = linear(h, ly["qkv"], ly["qkvb"], S, 3 * D)
    parts = []
    for k in range(3):                                   # jnp.split(qkv, 3, axis=-1)
        v = new()
        emit(f"{v} = stablehlo.slice {qkv} [0:{B}, 0:{T}, {k * D}:{(k + 1) * D}] : ({t(*qs)}) -> {t(B, T, D)}")
        r = new()
        emit(f"{r} = stablehlo.reshape {v} : ({t(B, T, D)}) -> {t(B, T, H, HD)}")
        parts.append(r)
    q, kk, vv = parts
    s = dot(q, kk, [B, T, H, HD], [B, T, H, HD], [B, H, T, T], "batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3]")
    sc = ew("divide", s, splat(f"{HD ** 0.5:e}", [B, H, T, T]), [B, H, T, T])
    i0, i1 = new(), new()
    emit(f"{i0} = stablehlo.iota dim = 0 : {t(T, T, dt='i32')}")
    emit(f"{i1} = stablehlo.iota dim = 1 : {t(T, T, dt='i32')}")
    ge = new()
    emit(f"{ge} = stablehlo.compare  GE, {i0}, {i1},  SIGNED : ({t(T, T, dt='i32')}, {t(T, T, dt='i32')}) -> {t(T, T, dt='i1')}")
    mb = bcast(ge, [T, T], [B, H, T, T], [2, 3], "i1")
    masked = new()
    emit(f"{masked} = stablehlo.select {mb}, {sc}, {splat('-1.000000e+09', [B, H, T, T])} : {t(B, H, T, T, dt='i1')}, {t(B, H, T, T)}")
    pr = softmax(masked, [B, H, T, T], 3)
    c = dot(pr, vv, [B, H, T, T], [B, T, H, HD], [B, H, T, HD], "batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1]")
    tr = new()
    emit(f"{tr} = stablehlo.transpose {c}, dims = [0, 2, 1, 3] : ({t(B, H, T, HD)}) -> {t(B, T, H, HD)}")
    c2 = new()
    emit(f"{c2} = stablehlo.reshape {tr} : ({t(B, T, H, HD)}) -> {t(B, T, D)}")
    o, _ = linear(c2, ly["o"], ly["ob"], S, D)
    x = ew("add", x, o, S)
    h = layernorm(x, ly["g2"], ly["b2"], S)
    f, fs = linear(h, ly["fc"], ly["fcb"], S, 4 * D)
    f = act(f, fs)
    o, _ = linear(f, ly["pr"], ly["prb"], fs, D)
    x = ew("add", x, o, S)
h = layernorm(x, gf, bf, S)
logits = dot(h, wte, S, [V, D], [B, T, V], "contracting_dims = [2] x [1]")     # tied: h @ wte.T

# optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
LS = [B, T, V]
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
loss = ew("divide", tot2, const(f"{float(B * T):e}"), [])

sig = ", ".join(f"{nm}: {ty} {{jax.arg_info = \"{pa}\", mhlo.layout_mode = \"default\", mhlo.sharding = \"{{replicated}}\"}}" for nm, ty, pa in args)
print("module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {")
print(f"  func.func public @main({sig}) -> ({t()} {{jax.result_info = \"\", mhlo.layout_mode = \"default\"}}) {{")
print("\n".join(out))
print(f"    return {loss} : {t()}")
print("  }")
print("}")
