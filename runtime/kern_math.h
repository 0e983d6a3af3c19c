/*
** kern_math.h: the scalar float functions of the CPU kernels (kern_cpu.c's
** vectorized loops, kern_attn.c's and kern_any.c's loops over other
** dtypes), written so that the loops around them vectorize: straight-line
** float and integer arithmetic, and selects through bit masks; and the
** loop macros those kernels share.
*/
#ifndef runtime_kern_math_h
#define runtime_kern_math_h

#include <math.h>
#include <stdint.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))

/* Loops that do arithmetic per element get an AVX2 clone chosen at load
   time (the way OpenBLAS picks its kernels); the baseline x86-64 has only
   SSE2, which would leave them several times slower than the GEMMs
   around them. kern_cpu.c and kern_any.c turn floating-point contraction
   on (#pragma GCC optimize("fp-contract=fast")), so the AVX2 clone fuses
   multiply-adds that the baseline rounds twice: results are the same
   whatever the thread count, but may differ in the last bit between a CPU
   with AVX2 and one without. A kernel that must round as separate IR
   instructions do (the fused Adam update) adds no product to anything.
   -DRT_NO_CLONES drops the clones. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(RT_NO_CLONES)
#define HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define HOT
#endif

/* Runs S (a statement using index k) for k in [0, n), in blocks of 8. */
#define FOR8(n, ...) do { \
    int64_t n_ = (n), i_ = 0; \
    for (; i_ + 8 <= n_; i_ += 8) \
      for (int j_ = 0; j_ < 8; j_++) { int64_t k = i_ + j_; __VA_ARGS__; } \
    for (; i_ < n_; i_++) { int64_t k = i_; __VA_ARGS__; } \
  } while (0)

/* Transcendentals written so that the FOR8 loops around them vectorize:
   straight-line float and integer arithmetic, and selects through bit
   masks (with the default -ftrapping-math GCC will not if-convert a
   float `?:` that feeds further float arithmetic). */

INLINE uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
INLINE float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
INLINE float sel(int c, float a, float b) {
  uint32_t m = -(uint32_t)c;
  return bitsf((fbits(a) & m) | (fbits(b) & ~m));
}

/* IEEE-754 maximum and minimum: NaN propagates (fmaxf would drop it) and
   -0 orders below +0 */
INLINE float maxnan(float x, float y) { return sel((x > y) | (x != x) | ((x == y) & (int)(fbits(y) >> 31)), x, y); }
INLINE float minnan(float x, float y) { return sel((x < y) | (x != x) | ((x == y) & (int)(fbits(x) >> 31)), x, y); }

/* exp within 1.2 ulp: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite split of
   ln2), e^r by its Taylor series to r^7, and 2^n applied as two halves so
   that results down to the subnormals come out right. -inf gives 0, +inf
   gives inf, NaN stays NaN. */
INLINE float exp_core(float x, int big) {
  float xc = big ? sel(x > 88.8f, 88.8f, x) : x;
  xc = sel(xc < -104.0f, -104.0f, xc);
  float f = xc * 1.44269504088896341f + 12582912.0f;     /* 1.5 * 2^23: rounds to an integer */
  float n = f - 12582912.0f;
  float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 +
            r * (1.0f / 720 + r * (1.0f / 5040)))))));
  int32_t ni = (int32_t)(fbits(f) - 0x4B400000u);       /* n, from the low mantissa bits */
  int32_t n1 = ni >> 1, n2 = ni - n1;
  return p * bitsf((uint32_t)(n1 + 127) << 23) * bitsf((uint32_t)(n2 + 127) << 23);
}

INLINE float exp_v(float x) { return exp_core(x, 1); }
/* for arguments known to stay below 88 (x - max, -x^2...): no overflow clamp */
INLINE float exp_lo(float x) { return exp_core(x, 0); }

/* x = exp(x - m) in place (arguments below 88), and the sum in double:
   eight lanes over whole groups of 8, the rest one by one, then the lanes
   added pairwise (the softmax family's order, so that every kernel sums a
   row the same way). */
INLINE double exp_sum_self(float *x, int64_t n, float m) {
  double acc[8] = {0}, s = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) { float e = exp_lo(x[i + j] - m); x[i + j] = e; acc[j] += e; }
  for (; i < n; i++) { x[i] = exp_lo(x[i] - m); s += x[i]; }
  return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* 0.5 erfc(a) for a >= 0: the Chebyshev-fitted form of Numerical Recipes
   (relative error under 1.2e-7), so that Phi(x) stays accurate in the
   negative tail where 1 + erf(x) would cancel. Rounding a*a in float adds
   about 1e-7 * a^2 relative error: 2e-6 at x = -6, where gelu is 6e-9. */
INLINE float half_erfc(float a) {
  float t = 1.0f / (1.0f + 0.5f * a);
  float y = -a * a - 1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f +
            t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f +
            t * (-0.82215223f + t * 0.17087277f))))))));
  return 0.5f * t * exp_lo(y);
}

#define SQRT1_2F 0.70710678118654752f
#define INV_SQRT2PI 0.39894228040143268f
#define GELU_C 0.79788456080286536f   /* sqrt(2/pi) */
#define GELU_A 0.044715f

/* the standard normal CDF */
INLINE float phi_cdf(float x) {
  float e = half_erfc(fabsf(x) * SQRT1_2F);
  return sel(x < 0, e, 1.0f - e);
}

/* stable both ways: 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below */
INLINE float sigm(float x) {
  float e = exp_lo(-fabsf(x)), s = 1.0f / (1.0f + e);
  return sel(x >= 0, s, e * s);
}

/* odd Taylor series near 0 (1 - 2/(e^2x + 1) would cancel there) */
INLINE float tanh_v(float x) {
  float a = fabsf(x), a2 = a * a;
  float big = 1.0f - 2.0f / (exp_v(2.0f * a) + 1.0f);
  float small = a + a * a2 * (-1.0f / 3 + a2 * (2.0f / 15 + a2 * (-17.0f / 315 + a2 * (62.0f / 2835 +
                a2 * (-1382.0f / 155925 + a2 * (21844.0f / 6081075))))));
  float t = sel(a < 0.4f, small, big);
  return bitsf(fbits(t) | (fbits(x) & 0x80000000u));
}

INLINE float gelu_f(float x) { return x * phi_cdf(x); }

/* 0.5 x (1 + tanh u) = x sigmoid(2u): no cancellation for negative x */
INLINE float gelu_tanh_f(float x) { return x * sigm(2.0f * GELU_C * (x + GELU_A * x * x * x)); }

INLINE float gelu_grad_f(float x, float dy) {
  return dy * (phi_cdf(x) + x * INV_SQRT2PI * exp_lo(-0.5f * x * x));
}

/* with s = sigmoid(2u): 0.5 (1 + tanh u) = s and 0.5 x (1 - tanh^2 u) = 2 x s (1 - s) */
INLINE float gelu_tanh_grad_f(float x, float dy) {
  float s = sigm(2.0f * GELU_C * (x + GELU_A * x * x * x));
  float du = GELU_C * (1.0f + 3.0f * GELU_A * x * x);
  return dy * (s + 2.0f * x * s * (1.0f - s) * du);
}

INLINE float silu_grad_f(float x, float dy) {
  float s = sigm(x);
  return dy * (s + x * s * (1.0f - s));
}

#endif
