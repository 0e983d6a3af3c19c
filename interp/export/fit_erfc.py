#!/usr/bin/env python3
"""The coefficients of ERFC_FIT in emit.c, and their check (needs mpmath,
Debian's python3-mpmath; not part of the build).

erfc(z) for z >= 0 is written t exp(-z^2 + P(u)) with t = 2 / (2 + z) and
u = 2t - 1 in [-1, 1]; P is the Chebyshev fit of degree 27 of
log(erfc(z) / t) + z^2, a smooth function of t over all of (0, 1]."""
import math
import mpmath as mp

mp.mp.dps = 50


def target(u):
    t = max((u + 1) / 2, mp.mpf('1e-40'))
    z = 2 / t - 2
    return mp.log(mp.erfc(z) / t) + z * z


poly, err = mp.chebyfit(target, [-1, 1], 28, error=True)
coef = [float(c) for c in poly]          # highest degree first, as Horner reads them
for i in range(0, 28, 4):
    print('  ' + ', '.join('%.17g' % c for c in coef[i:i + 4]) + ',')


def erfc_d(z):                           # what the exported ops compute, in double
    t = 2 / (2 + z)
    p = 0.0
    for c in coef:
        p = p * (2 * t - 1) + c
    return t * math.exp(-z * z + p)


worst = max(abs(erfc_d(i / 400) / float(mp.erfc(i / 400)) - 1) for i in range(0, 2401))
print('fit error %s; erfc in double within %.3g relative over [0, 6]' % (mp.nstr(err, 3), worst))
