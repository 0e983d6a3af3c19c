/*
** dtype.h: how each element type is stored and read, shared by the
** kernels, the collectives, safetensors and the initializers. An element
** is read as a double (floats) or an int64 (integers and i1) and written
** back with the conversions of StableHLO's convert: float to float and
** integer to float round to nearest even, once; float to integer truncates
** toward zero and saturates, NaN giving 0 (as the reference interpreter's
** APFloat::convertToInteger); integer to integer wraps (two's complement);
** anything to i1 is "not zero". bf16 and f16 are the upper half of an f32
** and IEEE binary16, both rounded to nearest even, subnormals kept.
*/
#ifndef runtime_dtype_h
#define runtime_dtype_h

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "runtime/prog.h"

static inline int rt_dtype_isfloat(rt_dtype t) { return t == RT_F32 || t == RT_BF16 || t == RT_F16 || t == RT_F64; }
/* i32 i64 i8 ui8 i16 ui16 ui32 (not i1) */
static inline int rt_dtype_isint(rt_dtype t) {
  return t == RT_I32 || t == RT_I64 || t == RT_I8 || t == RT_UI8 || t == RT_I16 || t == RT_UI16 || t == RT_UI32;
}
/* f32, bf16 and f16 compute with f32 arithmetic */
static inline int rt_dtype_f32arith(rt_dtype t) { return t == RT_F32 || t == RT_BF16 || t == RT_F16; }

static inline float rt_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t rt_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float rt_bf16_to_f32(uint16_t h) { return rt_bits_f32((uint32_t)h << 16); }

static inline uint16_t rt_f32_to_bf16(float f) {
  uint32_t u = rt_f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);   /* NaN stays NaN (quiet) */
  u += 0x7FFFu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static inline float rt_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  if (e == 0x1F) return rt_bits_f32(sign | 0x7F800000u | (m << 13));          /* inf, NaN */
  if (e == 0) {
    float v = (float)m * (1.0f / 16777216.0f);                                  /* m * 2^-24 */
    return sign ? -v : v;
  }
  return rt_bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

static inline uint16_t rt_f32_to_f16(float f) {
  uint32_t u = rt_f32_bits(f), sign = (u >> 16) & 0x8000, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00 | ((a >> 13) & 0x3FF));  /* NaN */
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00);                       /* rounds to inf */
  if (a < 0x38800000u) {                                                        /* subnormal or zero */
    float v = rt_bits_f32(a) * 16777216.0f;                                     /* in units of 2^-24 */
    float r = nearbyintf(v);                                                    /* ties to even */
    return (uint16_t)(sign | (uint32_t)r);
  }
  uint32_t m = a + 0xFFFu + ((a >> 13) & 1) - 0x38000000u;                      /* rebias, round to nearest even */
  return (uint16_t)(sign | (m >> 13));
}

/* Round to odd: toward zero, with the last bit set when that dropped any
** bits. Rounded on to bf16 or f16 (at least two bits shorter than f32),
** this gives the value rounded once to nearest even, where rounding to
** nearest through f32 could land on a tie and round a second time. */
static inline float rt_f64_to_f32_odd(double x) {
  float f = (float)x;
  if (x != x || (double)f == x || isinf(x)) return f;
  if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);     /* inf: the largest float */
  return rt_bits_f32(rt_f32_bits(f) | 1u);
}

static inline float rt_i64_to_f32_odd(int64_t x) {
  uint64_t m = x < 0 ? 0 - (uint64_t)x : (uint64_t)x, sticky = 0;
  int e = 0;
  while (m >> 24) { sticky |= m & 1; m >>= 1; e++; }          /* 24 bits: exact in a float */
  float f = ldexpf((float)(m | sticky), e);
  return x < 0 ? -f : f;
}

/* float to integer: toward zero, saturating at [lo, hi], NaN -> 0 */
static inline int64_t rt_f2i(double x, double lo, double hi) {
  if (x != x) return 0;
  if (x <= lo) return (int64_t)lo;
  if (x >= hi) return x >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
  return (int64_t)x;
}

/* Typed reads and writes through memcpy: safetensors data and collective
** buffers may sit at any byte offset (a fixed-size memcpy compiles to a move). */
#define RT_LDFN(T, nm) static inline T nm(const void *p, int64_t i) { T v; memcpy(&v, (const char *)p + (size_t)i * sizeof(T), sizeof(T)); return v; }
RT_LDFN(float, rt_ld_f32)
RT_LDFN(double, rt_ld_f64)
RT_LDFN(uint16_t, rt_ld_u16)
RT_LDFN(int32_t, rt_ld_i32)
RT_LDFN(int64_t, rt_ld_i64)
#undef RT_LDFN
#define RT_ST(T, p, i, x) do { T v_ = (x); memcpy((char *)(p) + (size_t)(i) * sizeof(T), &v_, sizeof(T)); } while (0)

/* element i of p (dtype t) as a double: for floats */
static inline double rt_load_f(rt_dtype t, const void *p, int64_t i) {
  switch (t) {
  case RT_F32: return rt_ld_f32(p, i);
  case RT_F64: return rt_ld_f64(p, i);
  case RT_BF16: return rt_bf16_to_f32(rt_ld_u16(p, i));
  case RT_F16: return rt_f16_to_f32(rt_ld_u16(p, i));
  case RT_I32: return rt_ld_i32(p, i);
  case RT_I64: return (double)rt_ld_i64(p, i);
  case RT_I8: return ((const int8_t *)p)[i];
  case RT_UI8: case RT_I1: return ((const uint8_t *)p)[i];
  case RT_I16: return (int16_t)rt_ld_u16(p, i);
  case RT_UI16: return rt_ld_u16(p, i);
  case RT_UI32: return (uint32_t)rt_ld_i32(p, i);
  default: return 0;
  }
}

/* element i of p as an int64: for integers and i1 (floats convert) */
static inline int64_t rt_load_i(rt_dtype t, const void *p, int64_t i) {
  switch (t) {
  case RT_I32: return rt_ld_i32(p, i);
  case RT_I64: return rt_ld_i64(p, i);
  case RT_I8: return ((const int8_t *)p)[i];
  case RT_UI8: case RT_I1: return ((const uint8_t *)p)[i];
  case RT_I16: return (int16_t)rt_ld_u16(p, i);
  case RT_UI16: return rt_ld_u16(p, i);
  case RT_UI32: return (uint32_t)rt_ld_i32(p, i);
  default: return rt_f2i(rt_load_f(t, p, i), -9223372036854775808.0, 9223372036854775807.0);
  }
}

/* write the double x as element i of p (dtype t), converting as convert does */
static inline void rt_store_f(rt_dtype t, void *p, int64_t i, double x) {
  switch (t) {
  case RT_F32: RT_ST(float, p, i, (float)x); break;
  case RT_F64: RT_ST(double, p, i, x); break;
  case RT_BF16: RT_ST(uint16_t, p, i, rt_f32_to_bf16(rt_f64_to_f32_odd(x))); break;
  case RT_F16: RT_ST(uint16_t, p, i, rt_f32_to_f16(rt_f64_to_f32_odd(x))); break;
  case RT_I32: RT_ST(int32_t, p, i, (int32_t)rt_f2i(x, -2147483648.0, 2147483647.0)); break;
  case RT_I64: RT_ST(int64_t, p, i, rt_f2i(x, -9223372036854775808.0, 9223372036854775807.0)); break;
  case RT_I8: ((int8_t *)p)[i] = (int8_t)rt_f2i(x, -128.0, 127.0); break;
  case RT_UI8: ((uint8_t *)p)[i] = (uint8_t)rt_f2i(x, 0.0, 255.0); break;
  case RT_I16: RT_ST(int16_t, p, i, (int16_t)rt_f2i(x, -32768.0, 32767.0)); break;
  case RT_UI16: RT_ST(uint16_t, p, i, (uint16_t)rt_f2i(x, 0.0, 65535.0)); break;
  case RT_UI32: RT_ST(uint32_t, p, i, (uint32_t)rt_f2i(x, 0.0, 4294967295.0)); break;
  case RT_I1: ((uint8_t *)p)[i] = x != 0; break;
  default: break;
  }
}

/* write the integer x as element i of p: integers wrap, floats round once
** to nearest even (not through a double, which rounds beyond 2^53) */
static inline void rt_store_i(rt_dtype t, void *p, int64_t i, int64_t x) {
  switch (t) {
  case RT_F32: RT_ST(float, p, i, (float)x); break;
  case RT_F64: RT_ST(double, p, i, (double)x); break;
  case RT_BF16: RT_ST(uint16_t, p, i, rt_f32_to_bf16(rt_i64_to_f32_odd(x))); break;
  case RT_F16: RT_ST(uint16_t, p, i, rt_f32_to_f16(rt_i64_to_f32_odd(x))); break;
  case RT_I32: RT_ST(int32_t, p, i, (int32_t)(uint32_t)(uint64_t)x); break;
  case RT_I64: RT_ST(int64_t, p, i, x); break;
  case RT_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)x; break;
  case RT_UI8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)x; break;
  case RT_I16: case RT_UI16: RT_ST(uint16_t, p, i, (uint16_t)(uint64_t)x); break;
  case RT_UI32: RT_ST(uint32_t, p, i, (uint32_t)(uint64_t)x); break;
  case RT_I1: ((uint8_t *)p)[i] = x != 0; break;
  default: rt_store_f(t, p, i, (double)x); break;
  }
}

#endif
