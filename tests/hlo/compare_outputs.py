"""Compare `carve run --print-outputs` lines with an expected file.

usage: compare_outputs.py ACTUAL EXPECTED
Each expected line is what --print-outputs prints for one result (name,
shape, dtype, values), optionally with "ulp": N, the largest distance
allowed between a float and its expected value in units in the last place
of the result's dtype (default 1; 0 asks for the same bits). Integers and
booleans must be equal. A NaN equals any NaN; infinities and zeros must
match exactly, sign included ("-0" is -0.0, "0" is +0.0). Expected numbers
are read as decimals and rounded to the dtype first, so 0.1 in an f32 line
means the f32 nearest to 0.1. Prints one line per difference, exits 1 if
there is any.
"""
import json
import math
import struct
import sys

WIDTH = {"f32": 32, "f64": 64, "bf16": 16, "f16": 16}


def bits(dtype, x):
    """The bit pattern of x rounded to nearest even in dtype, as an unsigned int."""
    if dtype == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if dtype == "f16":
        try:
            return struct.unpack("<H", struct.pack("<e", x))[0]
        except OverflowError:
            return 0xFC00 if x < 0 else 0x7C00
    try:
        u = struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        u = 0xFF800000 if x < 0 else 0x7F800000
    if dtype == "f32":
        return u
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def ordered(dtype, u):
    """Bits as an integer that counts representable values: ulp distance is a difference."""
    w = WIDTH[dtype]
    mag = u & ((1 << (w - 1)) - 1)
    return -mag if u >> (w - 1) else mag


def num(v):
    if isinstance(v, str):
        return float(v)          # "nan", "inf", "-inf"
    return float(v)


def show(v):
    return json.dumps(v)


def same_float(dtype, got, want, ulp):
    g, e = num(got), num(want)
    if math.isnan(e) or math.isnan(g):
        return math.isnan(e) and math.isnan(g), ""
    gb, eb = bits(dtype, g), bits(dtype, e)
    if gb == eb:
        return True, ""
    if math.isinf(e) or math.isinf(g) or e == 0 or g == 0:
        return False, ""
    d = abs(ordered(dtype, gb) - ordered(dtype, eb))
    return d <= ulp, " (%d ulp)" % d


def compare(actual, expected):
    diffs = []
    if len(actual) != len(expected):
        diffs.append("%d results, expected %d (%s)" % (len(actual), len(expected),
                     ", ".join(o.get("name", "?") for o in actual)))
    for a, e in zip(actual, expected):
        name = e["name"]
        head = ["%s: %s is %s, expected %s" % (name, key, show(a.get(key)), show(e[key]))
                for key in ("name", "shape", "dtype") if a.get(key) != e[key]]
        if head:
            diffs += head
            continue
        av, ev = a["values"], e["values"]
        if len(av) != len(ev):
            diffs.append("%s: %d values, expected %d" % (name, len(av), len(ev)))
            continue
        bad = []
        for i, (g, w) in enumerate(zip(av, ev)):
            if e["dtype"] in WIDTH:
                ok, why = same_float(e["dtype"], g, w, e.get("ulp", 1))
            else:
                ok, why = g == w and type(g) is type(w), ""
            if not ok:
                bad.append("[%d] %s, expected %s%s" % (i, show(g), show(w), why))
        if bad:
            more = " (+%d more)" % (len(bad) - 8) if len(bad) > 8 else ""
            diffs.append("%s: %s%s" % (name, "; ".join(bad[:8]), more))
    return diffs


def load(line):
    """A JSON line, with a bare -0 read as the float -0.0 (json reads it as
    the integer 0, which would lose the sign of zero both sides print)."""
    return json.loads(line, parse_int=lambda s: -0.0 if s == "-0" else int(s))


def main():
    actual = [load(l) for l in open(sys.argv[1]) if l.startswith("{")]
    expected = [load(l) for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
    diffs = compare(actual, expected)
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
