#!/usr/bin/env python3
"""Write a training step as jax.jit(step).lower(params, opt_state, x,
y).as_text() prints it when the update is optax's, without JAX: a two-layer
tanh MLP's mean squared error, its gradient (what jax.grad writes: dot_general
for the matmuls' transposes, reduce for the biases), then the update as
optax lowers it, leaf by leaf:

  sgd        p + (-lr) * g                           optax.sgd(lr)
  momentum   t' = g + m * t; p + (-lr) * t'          optax.sgd(lr, momentum=m)
  adam       mu' = (1 - b1) g + b1 mu, nu' = (1 - b2) g*g + b2 nu,
             count' = count < MAX ? count + 1 : MAX (safe_increment),
             u = (mu' / (1 - b1^count')) / (sqrt(nu' / (1 - b2^count') + 0) + eps),
             p + (-lr) * u                           optax.adam(lr)
  adamw      as adam with u + wd * p before the scaling   optax.adamw(lr, weight_decay=wd)

Arguments and results carry JAX's pytree paths (params['w1'],
opt_state[0].mu['w1'], [1]['w1'], [2][0].mu['w1'], ...).

usage: jax_opt_step.py [--opt sgd|momentum|adam|adamw] [--dtype f32|f64]
                       [--batch B] [--din I] [--dh H] [--dout O] [--lr LR] [--eps-root E]
"""
import argparse

p = argparse.ArgumentParser()
p.add_argument("--opt", default="adam", choices=["sgd", "momentum", "adam", "adamw"])
p.add_argument("--dtype", default="f32", choices=["f32", "f64"])
p.add_argument("--batch", type=int, default=16)
p.add_argument("--din", type=int, default=8)
p.add_argument("--dh", type=int, default=32)
p.add_argument("--dout", type=int, default=4)
p.add_argument("--lr", type=float, default=0.01)
p.add_argument("--eps-root", type=float, default=0.0)      # optax.adam's eps_root
a = p.parse_args()
F, B, I, H, O = a.dtype, a.batch, a.din, a.dh, a.dout
B1, B2, EPS, WD, MOM = 0.9, 0.999, 1e-8, 1e-4, 0.9

out, n = [], [0]


def t(*shape, dt=None):
    return "tensor<" + "".join(f"{d}x" for d in shape) + (dt or F) + ">"


def lit(x):
    """a float as JAX prints a literal of type F"""
    return f"{x:.6e}" if F == "f32" else repr(float(x))


def new():
    n[0] += 1
    return f"%{n[0]}"


def emit(s):
    out.append("    " + s)


def const(x, shape=(), dt=None):
    v = new()
    emit(f"{v} = stablehlo.constant dense<{x}> : {t(*shape, dt=dt)}")
    return v


def ew(op, x, y, shape, dt=None):
    v = new()
    emit(f"{v} = stablehlo.{op} {x}, {y} : {t(*shape, dt=dt)}")
    return v


def un(op, x, shape):
    v = new()
    emit(f"{v} = stablehlo.{op} {x} : {t(*shape)}")
    return v


def bcast(x, src, dst, dims, dt=None):
    v = new()
    emit(f"{v} = stablehlo.broadcast_in_dim {x}, dims = [{', '.join(map(str, dims))}] : ({t(*src, dt=dt)}) -> {t(*dst, dt=dt)}")
    return v


def splat(x, shape):
    """a literal of shape as JAX writes one: a scalar constant broadcast"""
    return bcast(const(lit(x)), [], shape, [])


def dot(x, y, xs, ys, rs, spec):
    v = new()
    emit(f"{v} = stablehlo.dot_general {x}, {y}, {spec}, precision = [DEFAULT, DEFAULT] : ({t(*xs)}, {t(*ys)}) -> {t(*rs)}")
    return v


def reduce_sum(x, shape, dims):
    z = const(lit(0))
    rs = [d for i, d in enumerate(shape) if i not in dims]
    v = new()
    emit(f"{v} = stablehlo.reduce({x} init: {z}) applies stablehlo.add across dimensions = [{', '.join(map(str, dims))}] : ({t(*shape)}, {t()}) -> {t(*rs)}")
    return v


leaves = [("b1", [H]), ("b2", [O]), ("w1", [I, H]), ("w2", [H, O])]     # JAX orders dict keys
args = []


def arg(path, shape, dt=None):
    args.append((f"%arg{len(args)}", t(*shape, dt=dt), path))
    return args[-1][0]


P = {k: arg(f"params['{k}']", s) for k, s in leaves}
S = {}
if a.opt == "momentum":
    S["trace"] = {k: arg(f"opt_state[0].trace['{k}']", s) for k, s in leaves}
elif a.opt in ("adam", "adamw"):
    S["count"] = arg("opt_state[0].count", [], "i32")
    S["mu"] = {k: arg(f"opt_state[0].mu['{k}']", s) for k, s in leaves}
    S["nu"] = {k: arg(f"opt_state[0].nu['{k}']", s) for k, s in leaves}
x, y = arg("x", [B, I]), arg("y", [B, O])

# forward: h = tanh(x @ w1 + b1), pred = h @ w2 + b2, loss = mean((pred - y)^2)
z = ew("add", dot(x, P["w1"], [B, I], [I, H], [B, H], "contracting_dims = [1] x [0]"), bcast(P["b1"], [H], [B, H], [1]), [B, H])
h = un("tanh", z, [B, H])
pred = ew("add", dot(h, P["w2"], [B, H], [H, O], [B, O], "contracting_dims = [1] x [0]"), bcast(P["b2"], [O], [B, O], [1]), [B, O])
d = ew("subtract", pred, y, [B, O])
loss = ew("divide", reduce_sum(ew("multiply", d, d, [B, O]), [B, O], [0, 1]), const(lit(B * O)), [])
# backward, as jax.grad writes it
dp = ew("multiply", splat(2.0 / (B * O), [B, O]), d, [B, O])
G = {"b2": reduce_sum(dp, [B, O], [0]), "w2": dot(h, dp, [B, H], [B, O], [H, O], "contracting_dims = [0] x [0]")}
dh = dot(dp, P["w2"], [B, O], [H, O], [B, H], "contracting_dims = [1] x [1]")
dz = ew("multiply", dh, ew("subtract", splat(1.0, [B, H]), ew("multiply", h, h, [B, H]), [B, H]), [B, H])
G["b1"] = reduce_sum(dz, [B, H], [0])
G["w1"] = dot(x, dz, [B, I], [B, H], [I, H], "contracting_dims = [0] x [0]")

# the update, leaf by leaf, as optax lowers it
res = [("[0]", loss, t())]
newp, news = {}, {}
if a.opt in ("adam", "adamw"):
    mx = const("2147483647", (), "i32")
    lt = new()
    emit(f"{lt} = stablehlo.compare  LT, {S['count']}, {mx},  SIGNED : ({t(dt='i32')}, {t(dt='i32')}) -> {t(dt='i1')}")
    inc = ew("add", S["count"], const("1", (), "i32"), [], "i32")
    cnt = new()
    emit(f"{cnt} = stablehlo.select {lt}, {inc}, {mx} : {t(dt='i1')}, {t(dt='i32')}")
    cf = new()
    emit(f"{cf} = stablehlo.convert {cnt} : ({t(dt='i32')}) -> {t()}")
    bc = [ew("subtract", const(lit(1)), ew("power", const(lit(b)), cf, []), []) for b in (B1, B2)]
    news["count"] = cnt
for k, s in leaves:
    g = G[k]
    if a.opt == "sgd":
        u = g
    elif a.opt == "momentum":
        u = ew("add", g, ew("multiply", splat(MOM, s), S["trace"][k], s), s)
        news.setdefault("trace", {})[k] = u
    else:
        mu = ew("add", ew("multiply", splat(1 - B1, s), g, s), ew("multiply", splat(B1, s), S["mu"][k], s), s)
        nu = ew("add", ew("multiply", splat(1 - B2, s), ew("multiply", g, g, s), s), ew("multiply", splat(B2, s), S["nu"][k], s), s)
        news.setdefault("mu", {})[k], news.setdefault("nu", {})[k] = mu, nu
        mh = ew("divide", mu, bcast(bc[0], [], s, []), s)
        vh = ew("divide", nu, bcast(bc[1], [], s, []), s)
        u = ew("divide", mh, ew("add", un("sqrt", ew("add", vh, splat(a.eps_root, s), s), s), splat(EPS, s), s), s)
        if a.opt == "adamw":
            u = ew("add", u, ew("multiply", splat(WD, s), P[k], s), s)
    newp[k] = ew("add", P[k], ew("multiply", splat(-a.lr, s), u, s), s)
for k, s in leaves:
    res.append((f"[1]['{k}']", newp[k], t(*s)))
if a.opt == "momentum":
    for k, s in leaves:
        res.append((f"[2][0].trace['{k}']", news["trace"][k], t(*s)))
elif a.opt in ("adam", "adamw"):
    res.append(("[2][0].count", news["count"], t(dt="i32")))
    for part in ("mu", "nu"):
        for k, s in leaves:
            res.append((f"[2][0].{part}['{k}']", news[part][k], t(*s)))

sig = ", ".join(f"{v}: {ty} {{jax.arg_info = \"{pa}\"}}" for v, ty, pa in args)
outs = ", ".join(f"{ty} {{jax.result_info = \"{pa}\"}}" for pa, _, ty in res)
print(f"module @jit_step attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{")
print(f"  func.func public @main({sig}) -> ({outs}) {{")
print("\n".join(out))
print(f"    return {', '.join(v for _, v, _ in res)} : {', '.join(ty for _, _, ty in res)}")
print("  }")
print("}")
