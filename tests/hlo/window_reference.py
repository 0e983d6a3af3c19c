"""Write tests/hlo/ops/{convolution,reduce_window,select_and_scatter}.{mlir,expected}.

usage: python3 tests/hlo/window_reference.py   (from the top of the tree)

The expected values come from the StableHLO spec's definitions, written
here as direct loops over every result element (no im2col, no slices), so
they are independent of how carve builds these ops. Operands are small
integers (or halves), so every sum is exact in f32 and the files compare
to the bit.
"""
import itertools
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def strides_of(shape):
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return list(reversed(st))


class T:
    """A tensor: shape and row-major values."""

    def __init__(self, shape, vals):
        assert len(vals) == numel(shape)
        self.shape, self.vals = list(shape), list(vals)

    def at(self, idx):
        return self.vals[sum(i * s for i, s in zip(idx, strides_of(self.shape)))]


def ramp(shape, mod, shift, scale=1.0):
    """Deterministic small values: ((i * 7 + 3) mod m) - shift, times scale."""
    return T(shape, [(((i * 7 + 3) % mod) - shift) * scale for i in range(numel(shape))])


def dense(t, dtype):
    def nest(vals, shape):
        if not shape:
            return fmt(vals[0], dtype)
        n = numel(shape[1:])
        return "[" + ", ".join(nest(vals[i * n:(i + 1) * n], shape[1:]) for i in range(shape[0])) + "]"
    return "dense<%s>" % nest(t.vals, t.shape)


def fmt(x, dtype):
    if dtype.startswith("i"):
        return str(int(x))
    return repr(float(x))


def ttype(shape, dtype):
    return "tensor<%s>" % "x".join([str(d) for d in shape] + [dtype])


# ---- convolution, as the spec defines it ----

def conv(lhs, rhs, dn, stride, pad, lhs_dil, rhs_dil, rev, groups):
    (ib, if_, isp), (ki, ko, ksp), (ob, of, osp) = dn
    n = len(isp)
    W = [lhs.shape[d] for d in isp]
    K = [rhs.shape[d] for d in ksp]
    P = [(W[i] - 1) * lhs_dil[i] + 1 + pad[i][0] + pad[i][1] for i in range(n)]
    E = [(K[i] - 1) * rhs_dil[i] + 1 for i in range(n)]
    O = [max(0, (P[i] - E[i]) // stride[i] + 1) for i in range(n)]
    B, I, OC = lhs.shape[ib], rhs.shape[ki], rhs.shape[ko]
    og = OC // groups
    oshape = [0] * (n + 2)
    oshape[ob], oshape[of] = B, OC
    for i in range(n):
        oshape[osp[i]] = O[i]
    out = []
    for oidx in itertools.product(*[range(d) for d in oshape]):
        b, oc = oidx[ob], oidx[of]
        g = oc // og
        acc = 0.0
        for kidx in itertools.product(*[range(k) for k in K]):
            win = []
            for i in range(n):
                q = oidx[osp[i]] * stride[i] + kidx[i] * rhs_dil[i] - pad[i][0]
                if q < 0 or q % lhs_dil[i] or q // lhs_dil[i] >= W[i]:
                    win = None
                    break
                win.append(q // lhs_dil[i])
            if win is None:
                continue
            kk = [K[i] - 1 - kidx[i] if rev[i] else kidx[i] for i in range(n)]
            for c in range(I):
                li = [0] * (n + 2)
                li[ib], li[if_] = b, g * I + c
                for i in range(n):
                    li[isp[i]] = win[i]
                ri = [0] * (n + 2)
                ri[ki], ri[ko] = c, oc
                for i in range(n):
                    ri[ksp[i]] = kk[i]
                acc += lhs.at(li) * rhs.at(ri)
        out.append(acc)
    return T(oshape, out)


def dn_text(dn):
    def side(first, second, sp, letters):
        r = [None] * (len(sp) + 2)
        r[first], r[second] = letters
        for i, d in enumerate(sp):
            r[d] = str(i)
        return "[" + ", ".join(r) + "]"
    (ib, if_, isp), (ki, ko, ksp), (ob, of, osp) = dn
    return "%sx%s->%s" % (side(ib, if_, isp, "bf"), side(ki, ko, ksp, "io"), side(ob, of, osp, "bf"))


NHWC = ((0, 3, [1, 2]), (2, 3, [0, 1]), (0, 3, [1, 2]))       # JAX/Flax: [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
NCHW = ((0, 1, [2, 3]), (1, 0, [2, 3]), (0, 1, [2, 3]))       # PyTorch:  [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
NWC = ((0, 2, [1]), (1, 2, [0]), (0, 2, [1]))                 # 1D:       [b, 0, f]x[0, i, o]->[b, 0, f]


def conv_file():
    cases = []   # (name, lhs, rhs, dn, stride, pad, lhs_dil, rhs_dil, rev, groups, form, dtype)
    cases.append(("same_3x3", ramp([2, 5, 5, 3], 5, 2), ramp([3, 3, 3, 4], 3, 1), NHWC, [1, 1], [[1, 1], [1, 1]], [1, 1], [1, 1], [0, 0], 1,
                  "pretty", "f32"))
    cases.append(("stride2_flax_same", ramp([1, 6, 7, 2], 5, 2), ramp([3, 3, 2, 3], 3, 1), NHWC, [2, 2], [[0, 1], [1, 1]], [1, 1], [1, 1],
                  [0, 0], 1, "pretty", "f32"))
    cases.append(("torch_layout_dilated", ramp([2, 2, 6, 5], 7, 3, 0.5), ramp([3, 2, 2, 3], 3, 1), NCHW, [1, 2], [[2, 0], [1, 2]],
                  [1, 1], [2, 1], [0, 0], 1, "generic", "f32"))
    cases.append(("grouped", ramp([1, 4, 4, 4], 5, 2), ramp([2, 2, 2, 6], 3, 1), NHWC, [1, 1], [[0, 0], [0, 0]], [1, 1], [1, 1], [0, 0], 2,
                  "pretty", "f32"))
    cases.append(("depthwise", ramp([2, 5, 4, 3], 5, 2), ramp([3, 3, 1, 3], 3, 1), NHWC, [1, 1], [[1, 1], [1, 1]], [1, 1], [1, 1], [0, 0],
                  3, "generic", "f32"))
    cases.append(("transposed", ramp([1, 3, 3, 2], 5, 2), ramp([3, 3, 2, 2], 3, 1), NHWC, [1, 1], [[2, 2], [1, 2]], [2, 2], [1, 1], [1, 1],
                  1, "pretty", "f32"))
    cases.append(("conv1d_stride3_cut", ramp([2, 11, 2], 5, 2), ramp([3, 2, 2], 3, 1), NWC, [3], [[-1, 2]], [1], [1], [0], 1, "pretty",
                  "f32"))
    cases.append(("f64_pointwise", ramp([1, 3, 2, 4], 9, 4, 0.25), ramp([1, 1, 4, 2], 5, 2), NHWC, [1, 1], [[0, 0], [0, 0]], [1, 1], [1, 1],
                  [0, 0], 1, "pretty", "f64"))
    lines, outs, exp = [], [], []
    for (name, lhs, rhs, dn, st, pad, ld, rd, rev, g, form, dt) in cases:
        y = conv(lhs, rhs, dn, st, pad, ld, rd, rev, g)
        lt, rt, yt = ttype(lhs.shape, dt), ttype(rhs.shape, dt), ttype(y.shape, dt)
        lines.append("  %%%s_x = stablehlo.constant %s : %s" % (name, dense(lhs, dt), lt))
        lines.append("  %%%s_k = stablehlo.constant %s : %s" % (name, dense(rhs, dt), rt))
        ints = lambda v: "[" + ", ".join(str(x) for x in v) + "]"
        if form == "pretty":
            win = "stride = %s, pad = [%s], lhs_dilate = %s, rhs_dilate = %s, reverse = [%s]" % (
                ints(st), ", ".join(ints(p) for p in pad), ints(ld), ints(rd), ", ".join("true" if r else "false" for r in rev))
            lines.append("  %%%s = stablehlo.convolution(%%%s_x, %%%s_k) dim_numbers = %s, window = {%s} {batch_group_count = 1 : i64, "
                         "feature_group_count = %d : i64} : (%s, %s) -> %s" % (name, name, name, dn_text(dn), win, g, lt, rt, yt))
        else:
            arr = lambda v: "array<i64: %s>" % ", ".join(str(x) for x in v)
            lines.append('  %%%s = "stablehlo.convolution"(%%%s_x, %%%s_k) {batch_group_count = 1 : i64, dimension_numbers = '
                         '#stablehlo.conv<%s>, feature_group_count = %d : i64, lhs_dilation = %s, padding = dense<%s> : tensor<%dx2xi64>, '
                         'rhs_dilation = %s, window_strides = %s} : (%s, %s) -> %s'
                         % (name, name, name, dn_text(dn), g, arr(ld), "[" + ", ".join(ints(p) for p in pad) + "]", len(pad), arr(rd),
                            arr(st), lt, rt, yt))
        outs.append((name, yt))
        exp.append(json.dumps({"name": name, "shape": y.shape, "dtype": dt, "ulp": 0, "values": [float(v) for v in y.vals]}))
    head = """// convolution: StableHLO spec semantics, checked against direct loops over
// every result element (tests/hlo/window_reference.py wrote this file and
// its expected values). The cases: Flax's NHWC/HWIO 3x3 'SAME'; stride 2
// with Flax's asymmetric padding; PyTorch's NCHW/OIHW layout with a
// dilated kernel, asymmetric padding and the generic form; two feature
// groups; depthwise (one group per channel); a transposed convolution
// (input dilation, padding, a reversed kernel); 1D with stride 3 and a
// negative (cutting) pad; an f64 1x1 convolution.
"""
    return head, lines, outs, exp


# ---- reduce_window, as the spec defines it ----

OPS = {"add": lambda a, b: a + b, "maximum": max, "minimum": min, "multiply": lambda a, b: a * b}


def reduce_window(x, init, op, wdims, wst, bdil, wdil, pad):
    r = len(x.shape)
    P = [(x.shape[i] - 1) * bdil[i] + 1 + pad[i][0] + pad[i][1] for i in range(r)]
    E = [(wdims[i] - 1) * wdil[i] + 1 for i in range(r)]
    O = [max(0, (P[i] - E[i]) // wst[i] + 1) for i in range(r)]
    out = []
    for oidx in itertools.product(*[range(d) for d in O]):
        acc = init
        for k in itertools.product(*[range(w) for w in wdims]):
            idx = []
            for i in range(r):
                q = oidx[i] * wst[i] + k[i] * wdil[i] - pad[i][0]
                if q < 0 or q % bdil[i] or q // bdil[i] >= x.shape[i]:
                    idx = None
                    break
                idx.append(q // bdil[i])
            acc = OPS[op](acc, init if idx is None else x.at(idx))
        out.append(acc)
    return T(O, out)


def rw_file():
    inf = float("inf")
    cases = [  # (name, x, init, op, window, strides, base dil, window dil, padding, dtype)
        ("max_pool_2x2", ramp([2, 4, 5, 3], 11, 5), -inf, "maximum", [1, 2, 2, 1], [1, 2, 2, 1], [1] * 4, [1] * 4,
         [[0, 0], [0, 0], [0, 0], [0, 0]], "f32"),
        ("max_pool_3x3_same", ramp([1, 5, 5, 2], 11, 5), -inf, "maximum", [1, 3, 3, 1], [1, 2, 2, 1], [1] * 4, [1] * 4,
         [[0, 0], [1, 1], [1, 1], [0, 0]], "f32"),
        ("sum_pool_same", ramp([2, 4, 4, 1], 7, 3, 0.5), 0.0, "add", [1, 3, 3, 1], [1, 1, 1, 1], [1] * 4, [1] * 4,
         [[0, 0], [1, 1], [1, 1], [0, 0]], "f32"),
        ("cumsum", ramp([3, 7], 9, 4), 0.0, "add", [1, 7], [1, 1], [1, 1], [1, 1], [[0, 0], [6, 0]], "f32"),
        ("min_dilated_init", ramp([9, 4], 13, 6, 0.5), 0.5, "minimum", [3, 2], [2, 1], [1, 2], [2, 1], [[1, 0], [0, 1]], "f32"),
        ("max_i32", ramp([6, 5], 17, 8), -2147483648, "maximum", [2, 3], [2, 2], [1, 1], [1, 1], [[0, 0], [1, 1]], "i32"),
        ("product_region", ramp([3, 6], 5, 2, 0.5), 2.0, "multiply", [1, 3], [1, 2], [1, 1], [1, 1], [[0, 0], [1, 0]], "f32"),
    ]
    lines, outs, exp = [], [], []
    for (name, x, init, op, wd, ws, bd, wdl, pad, dt) in cases:
        y = reduce_window(x, init, op, wd, ws, bd, wdl, pad)
        xt, yt, st = ttype(x.shape, dt), ttype(y.shape, dt), ttype([], dt)
        if dt == "i32":
            x = T(x.shape, [int(v) for v in x.vals])
        initlit = ("0xFF800000" if init == -inf else fmt(init, dt))
        lines.append("  %%%s_x = stablehlo.constant %s : %s" % (name, dense(x, dt), xt))
        lines.append("  %%%s_i = stablehlo.constant dense<%s> : %s" % (name, initlit, st))
        arr = lambda v: "array<i64: %s>" % ", ".join(str(a) for a in v)
        lines.append('  %%%s = "stablehlo.reduce_window"(%%%s_x, %%%s_i) <{base_dilations = %s, padding = dense<[%s]> : tensor<%dx2xi64>, '
                     'window_dilations = %s, window_dimensions = %s, window_strides = %s}> ({'
                     % (name, name, name, arr(bd), ", ".join("[%d, %d]" % tuple(p) for p in pad), len(pad), arr(wdl), arr(wd), arr(ws)))
        lines.append("  ^bb0(%%a: %s, %%b: %s):" % (st, st))
        lines.append("    %%r = stablehlo.%s %%a, %%b : %s" % (op, st))
        lines.append("    stablehlo.return %%r : %s" % st)
        lines.append("  }) : (%s, %s) -> %s" % (xt, st, yt))
        outs.append((name, yt))
        vals = [int(v) for v in y.vals] if dt == "i32" else [float(v) for v in y.vals]
        rec = {"name": name, "shape": y.shape, "dtype": dt, "values": vals}
        if dt != "i32":
            rec["ulp"] = 0
        exp.append(json.dumps(rec))
    head = """// reduce_window: StableHLO spec semantics, checked against direct loops over
// every result element (tests/hlo/window_reference.py wrote this file and
// its expected values). The cases: Flax's max_pool (2x2, stride 2, -inf
// as the init); a 3x3 stride 2 max pool with padding; a sum pool with
// 'SAME' padding (avg_pool before its division); jnp.cumsum as JAX
// writes it on CPU (a window as long as the row, padded before); min with
// base and window dilation and an init (0.5) that is not min's identity;
// an i32 max pool with INT_MIN as the init; a product (a region carve
// applies to whole tensors) with an init of 2, in window order.
"""
    return head, lines, outs, exp


# ---- select_and_scatter, as XLA evaluates it ----

CMP = {"GE": lambda a, b: a >= b, "GT": lambda a, b: a > b, "LE": lambda a, b: a <= b}


def select_and_scatter(x, src, init, cmp, wdims, wst, pad):
    """Each window's kept element (scanning the window in order, a later
    element replaces the kept one when cmp(kept, later) is false; padding
    is never selected) receives the window's source value."""
    r = len(x.shape)
    out = [init] * numel(x.shape)
    st = strides_of(x.shape)
    for oidx in itertools.product(*[range(d) for d in src.shape]):
        sel = None
        for k in itertools.product(*[range(w) for w in wdims]):
            idx = [oidx[i] * wst[i] + k[i] - pad[i][0] for i in range(r)]
            if any(q < 0 or q >= x.shape[i] for i, q in enumerate(idx)):
                continue
            if sel is None or not CMP[cmp](x.at(sel), x.at(idx)):
                sel = idx
        if sel is not None:
            out[sum(i * s for i, s in zip(sel, st))] += src.at(list(oidx))
    return T(x.shape, out)


def sas_file():
    ties = T([1, 4, 4, 1], [1, 3, 3, 0, 2, 3, 1, 1, 5, 5, 0, 2, 5, 1, 2, 2])
    cases = [  # (name, x, source shape, init, select, window, strides, padding)
        ("max_pool_grad_ties", ties, [1, 2, 2, 1], 0.0, "GE", [1, 2, 2, 1], [1, 2, 2, 1], [[0, 0]] * 4),
        ("max_pool_grad_ties_gt", ties, [1, 2, 2, 1], 0.0, "GT", [1, 2, 2, 1], [1, 2, 2, 1], [[0, 0]] * 4),
        ("same_padding_negative", ramp([2, 5, 5, 1], 9, 12), [2, 3, 3, 1], 0.0, "GE", [1, 3, 3, 1], [1, 2, 2, 1],
         [[0, 0], [1, 1], [1, 1], [0, 0]]),
        ("overlapping_init", ramp([4, 6], 7, 3), [2, 4], 0.5, "GE", [3, 3], [1, 1], [[0, 0], [0, 0]]),
        ("min_pool_grad", ramp([3, 8], 11, 5), [3, 4], 0.0, "LE", [1, 2], [1, 2], [[0, 0], [0, 0]]),
    ]
    lines, outs, exp = [], [], []
    for (name, x, sshape, init, cmp, wd, ws, pad) in cases:
        src = ramp(sshape, 5, -1)
        y = select_and_scatter(x, src, init, cmp, wd, ws, pad)
        dt = "f32"
        xt, srt, st = ttype(x.shape, dt), ttype(src.shape, dt), ttype([], dt)
        arr = lambda v: "array<i64: %s>" % ", ".join(str(a) for a in v)
        lines.append("  %%%s_x = stablehlo.constant %s : %s" % (name, dense(x, dt), xt))
        lines.append("  %%%s_s = stablehlo.constant %s : %s" % (name, dense(src, dt), srt))
        lines.append("  %%%s_i = stablehlo.constant dense<%s> : %s" % (name, fmt(init, dt), st))
        lines.append('  %%%s = "stablehlo.select_and_scatter"(%%%s_x, %%%s_s, %%%s_i) <{padding = dense<[%s]> : tensor<%dx2xi64>, '
                     'window_dimensions = %s, window_strides = %s}> ({'
                     % (name, name, name, name, ", ".join("[%d, %d]" % tuple(p) for p in pad), len(pad), arr(wd), arr(ws)))
        lines.append("  ^bb0(%%a: %s, %%b: %s):" % (st, st))
        lines.append("    %%c = stablehlo.compare  %s, %%a, %%b,  FLOAT : (%s, %s) -> tensor<i1>" % (cmp, st, st))
        lines.append("    stablehlo.return %c : tensor<i1>")
        lines.append("  }, {")
        lines.append("  ^bb0(%%a: %s, %%b: %s):" % (st, st))
        lines.append("    %%r = stablehlo.add %%a, %%b : %s" % st)
        lines.append("    stablehlo.return %%r : %s" % st)
        lines.append("  }) : (%s, %s, %s) -> %s" % (xt, srt, st, xt))
        outs.append((name, xt))
        exp.append(json.dumps({"name": name, "shape": y.shape, "dtype": dt, "ulp": 0, "values": [float(v) for v in y.vals]}))
    head = """// select_and_scatter (the gradient JAX writes for a max pool): XLA's
// semantics, checked against direct loops (tests/hlo/window_reference.py
// wrote this file and its expected values): in each window the element the
// select comparison keeps (a later one replaces it when select(kept,
// later) is false, so GE keeps the first maximum and GT the last; padding
// is never selected) receives the window's source value, added to init.
// The cases: a 2x2 max pool with ties (GE, GT), a 3x3 stride-2 pool with
// 'SAME' padding over negative values, overlapping windows with an init of
// 0.5, a min pool (LE).
"""
    return head, lines, outs, exp


def write(base, head, lines, outs, exp):
    sig = ", ".join('%s {jax.result_info = "%s"}' % (t, n) for n, t in outs)
    with open(os.path.join(OUT, base + ".mlir"), "w") as f:
        f.write(head)
        f.write("func.func public @main() -> (%s) {\n" % sig)
        f.write("\n".join(lines) + "\n")
        f.write("  return %s : %s\n}\n" % (", ".join("%" + n for n, _ in outs), ", ".join(t for _, t in outs)))
    with open(os.path.join(OUT, base + ".expected"), "w") as f:
        f.write("\n".join(exp) + "\n")


if __name__ == "__main__":
    write("convolution", *conv_file())
    write("reduce_window", *rw_file())
    write("select_and_scatter", *sas_file())
