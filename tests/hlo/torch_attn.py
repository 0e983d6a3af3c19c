#!/usr/bin/env python3
"""Write a Llama attention block as PyTorch/XLA prints it, the spelling of
shared/third_party/stablehlo-models/tt-mlir/sdy_llama_attn_prefill_manual.mlir
at any size, without PyTorch: bf16 weights transposed before each dot, the
heads before the sequence ([b, h, s, d]), rotary embeddings from cos and
sin inputs, k and v of fewer heads repeated to q's (repeat_kv: expand and
reshape), q and k^T each scaled by head_dim ** -0.25 in f32, an additive
mask, the decomposed softmax with PyTorch's guard of rows with no key
(select(all -inf, 0, p)), the output projection in bf16.

--mask input   the mask an input [1, 1, T, T] (as the real block: any bias)
--mask causal  HF's causal mask built in the program: full(min).triu(1) as
               PyTorch decomposes triu ((arange[None] - arange[:, None]) >= 1)
--mask-fill X  the causal mask's fill (default f32's min)
--triu N       the causal mask's diagonal (triu(N); 1 keeps a query's own key)

usage: torch_attn.py [--dim D] [--heads H] [--kv-heads K] [--seq T] [--mask input|causal] [--mask-fill X] [--triu N]
"""
import argparse

p = argparse.ArgumentParser()
p.add_argument("--dim", type=int, default=64)
p.add_argument("--heads", type=int, default=8)
p.add_argument("--kv-heads", type=int, default=2)
p.add_argument("--seq", type=int, default=16)
p.add_argument("--mask", default="causal", choices=["input", "causal"])
p.add_argument("--mask-fill", default="-3.40282347E+38")
p.add_argument("--triu", type=int, default=1)     # the causal mask's diagonal: 0 hides a query's own key too
a = p.parse_args()
D, H, K, T = a.dim, a.heads, a.kv_heads, a.seq
HD, G = D // H, a.heads // a.kv_heads
assert H % K == 0 and HD % 2 == 0

out = []
n = [10]


def t(*shape, dt="bf16"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt + ">"


def op(s):
    n[0] += 1
    out.append(f"    %{n[0]} = " + s)
    return f"%{n[0]}"


def bcast(x, dims, src, dst, dt="bf16"):
    return op(f"stablehlo.broadcast_in_dim {x}, dims = [{', '.join(map(str, dims))}] : ({t(*src, dt=dt)}) -> {t(*dst, dt=dt)}")


def splat(x, shape, dt):
    return bcast(op(f"stablehlo.constant dense<{x}> : {t(dt=dt)}"), [], [], shape, dt)


def ew(name, x, y, shape, dt="bf16"):
    return op(f"stablehlo.{name} {x}, {y} : {t(*shape, dt=dt)}")


def convert(x, shape, src, dst):
    return op(f"stablehlo.convert {x} : ({t(*shape, dt=src)}) -> {t(*shape, dt=dst)}")


def reduce(x, shape, kind, init, dt):
    c = op(f"stablehlo.constant dense<{init}> : {t(dt=dt)}")
    return op(f"stablehlo.reduce({x} init: {c}) applies stablehlo.{kind} across dimensions = [3] : "
              f"({t(*shape, dt=dt)}, {t(dt=dt)}) -> {t(*shape[:3], dt=dt)}")


def proj(x, w, rows):
    """x [T, D] @ w.T, w [rows, D] as an argument: reshaped, transposed, dotted"""
    w3 = op(f"stablehlo.reshape {w} : ({t(rows, D)}) -> {t(1, rows, D)}")
    w2 = op(f"stablehlo.reshape {w3} : ({t(1, rows, D)}) -> {t(rows, D)}")
    wt = op(f"stablehlo.transpose {w2}, dims = [1, 0] : ({t(rows, D)}) -> {t(D, rows)}")
    return op(f"stablehlo.dot_general {x}, {wt}, contracting_dims = [1] x [0] : ({t(T, D)}, {t(D, rows)}) -> {t(T, rows)}")


def heads(y, nh):
    """[T, nh * HD] -> [1, nh, T, HD]"""
    r = op(f"stablehlo.reshape {y} : ({t(T, nh * HD)}) -> {t(1, T, nh, HD)}")
    return op(f"stablehlo.transpose {r}, dims = [0, 2, 1, 3] : ({t(1, T, nh, HD)}) -> {t(1, nh, T, HD)}")


def rope(x, nh):
    """x * cos + rotate_half(x) * sin"""
    s4 = [1, nh, T, HD]
    xc = ew("multiply", x, bcast("%arg6", [0, 2, 3], [1, T, HD], s4), s4)
    hi = op(f"stablehlo.slice {x} [0:1, 0:{nh}, 0:{T}, {HD // 2}:{HD}] : ({t(*s4)}) -> {t(1, nh, T, HD // 2)}")
    ng = op(f"stablehlo.negate {hi} : {t(1, nh, T, HD // 2)}")
    lo = op(f"stablehlo.slice {x} [0:1, 0:{nh}, 0:{T}, 0:{HD // 2}] : ({t(*s4)}) -> {t(1, nh, T, HD // 2)}")
    cat = op(f"stablehlo.concatenate {ng}, {lo}, dim = 3 : ({t(1, nh, T, HD // 2)}, {t(1, nh, T, HD // 2)}) -> {t(*s4)}")
    return ew("add", xc, ew("multiply", cat, bcast("%arg4", [0, 2, 3], [1, T, HD], s4), s4), s4)


def repeat_kv(x):
    """[1, K, T, HD] -> [1, H, T, HD]: x[:, :, None].expand(1, K, G, T, HD).reshape(1, H, T, HD)"""
    b = op(f"stablehlo.broadcast_in_dim {x}, dims = [0, 1, 3, 4] : ({t(1, K, T, HD)}) -> {t(1, K, G, T, HD)}")
    return op(f"stablehlo.reshape {b} : ({t(1, K, G, T, HD)}) -> {t(1, H, T, HD)}")


def causal_mask():
    """torch.full((T, T), min).triu(1), [1, 1, T, T] in f32"""
    cols = op(f"stablehlo.iota dim = 0 : {t(T, dt='i64')}")
    rows = op(f"stablehlo.iota dim = 0 : {t(T, dt='i64')}")
    d = ew("subtract", bcast(cols, [1], [T], [T, T], "i64"), bcast(rows, [0], [T], [T, T], "i64"), [T, T], "i64")
    ge = op(f"stablehlo.compare  GE, {d}, {splat(str(a.triu), [T, T], 'i64')},  SIGNED : ({t(T, T, dt='i64')}, {t(T, T, dt='i64')}) -> {t(T, T, dt='i1')}")
    m = op(f"stablehlo.select {ge}, {splat(a.mask_fill, [T, T], 'f32')}, {splat('0.000000e+00', [T, T], 'f32')} : {t(T, T, dt='i1')}, {t(T, T, dt='f32')}")
    return op(f"stablehlo.reshape {m} : ({t(T, T, dt='f32')}) -> {t(1, 1, T, T, dt='f32')}")


S4, Q4, KT = [1, H, T, T], [1, H, T, HD], [1, H, HD, T]
R3 = [1, H, T]
x = op(f"stablehlo.reshape %arg2 : ({t(1, T, D)}) -> {t(T, D)}")
q = convert(rope(heads(proj(x, "%arg7", D), H), H), Q4, "bf16", "f32")
qs = ew("multiply", q, splat(f"{HD ** -0.25:.9}", Q4, "f32"), Q4, "f32")
k = convert(repeat_kv(rope(heads(proj(x, "%arg5", K * HD), K), K)), Q4, "bf16", "f32")
kt = op(f"stablehlo.transpose {k}, dims = [0, 1, 3, 2] : ({t(*Q4, dt='f32')}) -> {t(*KT, dt='f32')}")
ks = ew("multiply", kt, splat(f"{HD ** -0.25:.9}", KT, "f32"), KT, "f32")
s = op(f"stablehlo.dot_general {qs}, {ks}, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : "
       f"({t(*Q4, dt='f32')}, {t(*KT, dt='f32')}) -> {t(*S4, dt='f32')}")
m = convert("%arg3", [1, 1, T, T], "bf16", "f32") if a.mask == "input" else causal_mask()
m3 = op(f"stablehlo.reshape {m} : ({t(1, 1, T, T, dt='f32')}) -> {t(1, T, T, dt='f32')}")
s = ew("add", s, bcast(m3, [0, 2, 3], [1, T, T], S4, "f32"), S4, "f32")
# the guard: rows whose every score is -inf get zeros
eq = op(f"stablehlo.compare  EQ, {convert(s, S4, 'f32', 'f64')}, {splat('0xFFF0000000000000', S4, 'f64')} : "
        f"({t(*S4, dt='f64')}, {t(*S4, dt='f64')}) -> {t(*S4, dt='i1')}")
ne = op(f"stablehlo.not {eq} : {t(*S4, dt='i1')}")
anyk = reduce(ne, S4, "or", "false", "i1")
r4 = op(f"stablehlo.reshape {anyk} : ({t(*R3, dt='i1')}) -> {t(*R3, 1, dt='i1')}")
no = op(f"stablehlo.not {r4} : {t(*R3, 1, dt='i1')}")
r3 = op(f"stablehlo.reshape {no} : ({t(*R3, 1, dt='i1')}) -> {t(*R3, dt='i1')}")
guard = bcast(r3, [0, 1, 2], R3, S4, "i1")
mx = reduce(s, S4, "maximum", "0xFF800000", "f32")
e = op(f"stablehlo.exponential {ew('subtract', s, bcast(mx, [0, 1, 2], R3, S4, 'f32'), S4, 'f32')} : {t(*S4, dt='f32')}")
sm = reduce(e, S4, "add", "0.000000e+00", "f32")
pr = ew("divide", e, bcast(sm, [0, 1, 2], R3, S4, "f32"), S4, "f32")
pr = op(f"stablehlo.select {guard}, {splat('0.000000e+00', S4, 'f32')}, {pr} : {t(*S4, dt='i1')}, {t(*S4, dt='f32')}")
v = convert(repeat_kv(heads(proj(x, "%arg1", K * HD), K)), Q4, "bf16", "f32")
c = op(f"stablehlo.dot_general {pr}, {v}, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : "
       f"({t(*S4, dt='f32')}, {t(*Q4, dt='f32')}) -> {t(*Q4, dt='f32')}")
ct = op(f"stablehlo.transpose {convert(c, Q4, 'f32', 'bf16')}, dims = [0, 2, 1, 3] : ({t(*Q4)}) -> {t(1, T, H, HD)}")
y = proj(op(f"stablehlo.reshape {ct} : ({t(1, T, H, HD)}) -> {t(T, D)}"), "%arg0", D)
y = op(f"stablehlo.reshape {y} : ({t(T, D)}) -> {t(1, T, D)}")

sig = [("%arg0", t(D, D)), ("%arg1", t(K * HD, D)), ("%arg2", t(1, T, D)), ("%arg3", t(1, 1, T, T)), ("%arg4", t(1, T, HD)),
       ("%arg5", t(K * HD, D)), ("%arg6", t(1, T, HD)), ("%arg7", t(D, D))]
print("module @SyncTensorsGraph attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false} {")
print(f"  func.func @main({', '.join(f'{nm}: {ty}' for nm, ty in sig)}) -> {t(1, T, D)} {{")
print("\n".join(out))
print(f"    return {y} : {t(1, T, D)}")
print("  }")
print("}")
