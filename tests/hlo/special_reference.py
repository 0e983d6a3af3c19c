"""Write tests/hlo/ops/special.{mlir,expected}: chlo.erf_inv, lgamma,
digamma and next_after, and stablehlo.reduce_precision.

usage: python3 tests/hlo/special_reference.py   (from the top of the tree;
needs mpmath, which only this generator uses)

The expected values of erf_inv, lgamma and digamma are mpmath's, at 40
digits, rounded to the result's type: an independent computation (carve
writes these functions as Lanczos's series and Newton steps). next_after's
are Python's math.nextafter in f64 and, for the narrower types, the
neighbour found by walking the type's bit patterns. Inputs are exactly
representable in their type, so the program and the reference see the
same numbers. reduce_precision's are exact rational arithmetic: frexp,
Python's round (ties to even) of the scaled mantissa, and the reduced
format's normal exponent range.
"""
import json
import math
import os
import struct

import mpmath

mpmath.mp.dps = 40
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
INF, NAN = float("inf"), float("nan")


def to_f32(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def to_bf16(x):
    u = struct.unpack("<I", struct.pack("<f", to_f32(x)))[0]
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", u))[0]


def to_f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


ROUND = {"f64": float, "f32": to_f32, "bf16": to_bf16, "f16": to_f16}


HEX = {"f64": ("0x7FF8000000000000", "0x7FF0000000000000", "0xFFF0000000000000"),
       "f32": ("0x7FC00000", "0x7F800000", "0xFF800000"),
       "bf16": ("0x7FC0", "0x7F80", "0xFF80"), "f16": ("0x7E00", "0x7C00", "0xFC00")}


def lit(x, t):
    """x as a literal of type t: NaN and the infinities as t's own bits."""
    if math.isnan(x):
        return HEX[t][0]
    if math.isinf(x):
        return HEX[t][1] if x > 0 else HEX[t][2]
    return repr(x)


def out(v):
    return "nan" if math.isnan(v) else ("inf" if v == INF else "-inf" if v == -INF else v)


def mp_erfinv(x):
    if abs(x) > 1 or math.isnan(x):
        return NAN
    if abs(x) == 1:
        return math.copysign(INF, x)
    return float(mpmath.erfinv(mpmath.mpf(x)))


def mp_lgamma(x):
    if math.isinf(x):
        return INF
    if x <= 0 and x == math.floor(x):
        return INF
    return float(mpmath.log(abs(mpmath.gamma(mpmath.mpf(x)))))


def mp_digamma(x):
    if x <= 0 and x == math.floor(x):
        return NAN
    if x == INF:
        return INF
    return float(mpmath.digamma(mpmath.mpf(x)))


# the bits of each type: (pack format of the container, float from bits)
def f_bits(t, x):
    if t == "f64":
        return struct.unpack("<q", struct.pack("<d", x))[0]
    if t == "f16":
        return struct.unpack("<h", struct.pack("<e", x))[0]
    u = struct.unpack("<i", struct.pack("<f", x))[0]
    return u >> 16 if t == "bf16" else u


def from_bits(t, b):
    if t == "f64":
        return struct.unpack("<d", struct.pack("<q", b))[0]
    if t == "f16":
        return struct.unpack("<e", struct.pack("<h", b))[0]
    if t == "bf16":
        return struct.unpack("<f", struct.pack("<i", b << 16))[0]
    return struct.unpack("<f", struct.pack("<i", b))[0]


def next_after(t, x, y):
    if t == "f64":
        return math.nextafter(x, y)
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == y:
        return y
    # the nearest value of type t strictly between x and y's side: walk the
    # ordered bit patterns (sign-magnitude) one step toward y
    w = {"f32": 32, "bf16": 16, "f16": 16}[t]
    b = f_bits(t, x) & ((1 << w) - 1)
    mag, neg = b & ((1 << (w - 1)) - 1), b >> (w - 1)
    key = -mag if neg else mag            # counts representable values
    key += 1 if y > x else -1
    nb = (1 << (w - 1)) | -key if key < 0 else key
    if nb >= 1 << (w - 1):
        nb -= 1 << w                      # as a signed container
    return from_bits(t, nb)


def reduce_precision(x, e, m):
    if math.isnan(x):                               # no mantissa bits hold no NaN: an infinity
        return x if m > 0 else math.copysign(INF, x)
    if math.isinf(x) or x == 0:
        return x
    mant, ex = math.frexp(x)                       # x = mant 2^ex, 1/2 <= |mant| < 1
    y = round(mant * 2.0 ** (m + 1)) * 2.0 ** (ex - m - 1)
    if y == 0:
        return math.copysign(0.0, x)
    top = 2 ** (e - 1) - 1                          # the largest unbiased exponent
    ey = math.frexp(y)[1] - 1
    if ey > top:
        return math.copysign(INF, x)
    if ey < 1 - top:
        return math.copysign(0.0, x)
    return y


RP_X = [1.0, 1.00390625, 1.01171875, 1.0 + 2.0 ** -9, 1.0 + 3 * 2.0 ** -9, -2.71828182, 3.14159265, 65504.0,
        65520.0, 1e5, -1e5, 6.1035156e-05, 6.0e-05, -1e-30, -0.0, 0.0, INF, -INF, NAN, 3.4e38]
RP_FORMATS = [(8, 7), (5, 10), (4, 3), (11, 52), (5, 0)]

CASES = {
    "erf_inv": (mp_erfinv, [-1.0, -0.9999999, -0.5, -1e-10, 0.0, 0.25, 0.5, 0.75, 0.999, 1 - 2.0 ** -20, 1.0, 1.5]),
    "lgamma": (mp_lgamma, [-INF, -2.5, -1.0, -0.75, -1e-06, 1e-08, 0.5, 1.25, 1.5, 3.7, 10.0, 171.5, 1e10, INF]),
    "digamma": (mp_digamma, [-7.003, -2.0, -0.999, -0.026, 0.0, 1e-06, 0.5, 1.0, 2.5, 10.0, 1000.0, INF]),
}
ULP = {"erf_inv": {"f64": 8, "f32": 1, "bf16": 1},
       "lgamma": {"f64": 128, "f32": 1, "bf16": 1},
       "digamma": {"f64": 16, "f32": 1, "bf16": 1}}
PAIRS = [(1.0, 2.0), (1.0, 0.0), (-1.0, 0.0), (-1.0, -2.0), (0.0, 1.0), (0.0, -1.0), (-0.0, 1.0),
         (2.5, 2.5), (NAN, 1.0), (1.0, NAN), (INF, 0.0), (-3.0, INF), (1e-30, -1.0)]


def main():
    results, body, expected = [], [], []
    for fn, (ref, xs) in CASES.items():
        for t in ("f64", "f32", "bf16"):
            xt = [ROUND[t](x) for x in xs]
            name = "%s_%s" % (fn, t)
            n = len(xt)
            body.append("  %%%s_x = stablehlo.constant dense<[%s]> : tensor<%dx%s>" % (name, ", ".join(lit(x, t) for x in xt), n, t))
            body.append("  %%%s = chlo.%s %%%s_x : tensor<%dx%s> -> tensor<%dx%s>" % (name, fn, name, n, t, n, t))
            results.append((name, n, t))
            expected.append({"name": name, "shape": [n], "dtype": t, "ulp": ULP[fn][t],
                             "values": [out(ROUND[t](ref(x))) for x in xt]})
    for t in ("f64", "f32", "bf16", "f16"):
        xs = [ROUND[t](p[0]) for p in PAIRS]
        ys = [ROUND[t](p[1]) for p in PAIRS]
        name = "next_after_%s" % t
        n = len(xs)
        body.append("  %%%s_x = stablehlo.constant dense<[%s]> : tensor<%dx%s>" % (name, ", ".join(lit(x, t) for x in xs), n, t))
        body.append("  %%%s_y = stablehlo.constant dense<[%s]> : tensor<%dx%s>" % (name, ", ".join(lit(y, t) for y in ys), n, t))
        body.append("  %%%s = chlo.next_after %%%s_x, %%%s_y : tensor<%dx%s>, tensor<%dx%s> -> tensor<%dx%s>"
                    % (name, name, name, n, t, n, t, n, t))
        results.append((name, n, t))
        expected.append({"name": name, "shape": [n], "dtype": t, "ulp": 0,
                         "values": [out(next_after(t, x, y)) for x, y in zip(xs, ys)]})
    xs = [to_f32(x) for x in RP_X]
    for e, m in RP_FORMATS:
        name = "reduce_precision_e%dm%d" % (e, m)
        n = len(xs)
        body.append("  %%%s_x = stablehlo.constant dense<[%s]> : tensor<%dxf32>" % (name, ", ".join(lit(x, "f32") for x in xs), n))
        body.append("  %%%s = stablehlo.reduce_precision %%%s_x, format = e%dm%d : tensor<%dxf32>" % (name, name, e, m, n))
        results.append((name, n, "f32"))
        expected.append({"name": name, "shape": [n], "dtype": "f32", "ulp": 0,
                         "values": [out(reduce_precision(x, e, m)) for x in xs]})
    # an f64 literal meets an f64 op: log(2) in f64, not f32's
    body.append("  %log2_x = stablehlo.constant dense<2.0> : tensor<f64>")
    body.append("  %log2_f64 = stablehlo.log %log2_x : tensor<f64>")
    results.append(("log2_f64", 0, "f64"))
    expected.append({"name": "log2_f64", "shape": [], "dtype": "f64", "ulp": 0, "values": [math.log(2.0)]})

    def ty(n, t):
        return "tensor<%dx%s>" % (n, t) if n else "tensor<%s>" % t
    sig = ", ".join("%s {jax.result_info = \"%s\"}" % (ty(n, t), name) for name, n, t in results)
    with open(os.path.join(OUT, "special.mlir"), "w") as f:
        f.write("// Written by tests/hlo/special_reference.py; the expected values are mpmath's\n")
        f.write("// (erf_inv, lgamma, digamma) and bit walks (next_after): see that file.\n")
        f.write("// Poles, +-1, +-inf, NaN, zeros of either sign, subnormal steps, and digamma near its poles\n")
        f.write("// (where pi must keep f64's digits).\n")
        f.write("func.func public @main() -> (%s) {\n" % sig)
        f.write("\n".join(body) + "\n")
        f.write("  return %s : %s\n}\n" % (", ".join("%" + r[0] for r in results), ", ".join(ty(n, t) for _, n, t in results)))
    with open(os.path.join(OUT, "special.expected"), "w") as f:
        for e in expected:
            f.write(json.dumps(e) + "\n")


main()
