// log_plus_one, exponential_minus_one, sine, cosine, floor, ceil,
// round_nearest_even, round_nearest_afz, is_finite, clamp: the functions JAX
// lowers jnp.log1p, expm1, sin, cos, floor, ceil, round, is_finite and clip to.
// StableHLO spec: log_plus_one is IEEE-754 logp1, exponential_minus_one is
// expm1, sine sin, cosine cos: logp1(+-0) = +-0, logp1(-1) = -inf,
// logp1(x < -1) = NaN, logp1(inf) = inf; expm1(+-0) = +-0, expm1(-inf) = -1,
// expm1(inf) = inf; sin(+-0) = +-0, cos(+-0) = 1, sin(+-inf) = cos(+-inf) = NaN;
// NaN stays NaN. Other values are the exact function rounded to the type
// (Python's math.log1p/expm1/sin/cos; for f32 on the f32 input, in double,
// rounded to f32), within 1 ulp. log1p and expm1 of 1e-10 tell them from
// log(1 + x) and exp(x) - 1, which lose every digit there.
// floor, ceil, round_nearest_even, round_nearest_afz are IEEE-754
// roundToIntegralTowardNegative, TowardPositive, TiesToEven, TiesToAway:
// exact, a zero result keeps the operand's sign (ceil(-0.3) = -0,
// round(-0.3) = -0), infinities and NaN pass through.
// is_finite is IEEE-754 isFinite: false for +-inf and NaN, true otherwise
// (subnormals and -0 included); its result is i1.
// clamp: result = minimum(maximum(operand, min), max), with min and max
// scalars (rank 0) or of the operand's shape, maximum and minimum IEEE-754's
// (a NaN anywhere gives NaN, -0 < +0); so when min > max the result is max.
func.func public @main() -> (tensor<13xf32> {jax.result_info = "log1p_f32"}, tensor<14xf64> {jax.result_info = "log1p_f64"},
                             tensor<13xf32> {jax.result_info = "expm1_f32"}, tensor<14xf64> {jax.result_info = "expm1_f64"},
                             tensor<11xf32> {jax.result_info = "sin_f32"}, tensor<11xf32> {jax.result_info = "cos_f32"},
                             tensor<11xf64> {jax.result_info = "sin_f64"}, tensor<11xf64> {jax.result_info = "cos_f64"},
                             tensor<17xf32> {jax.result_info = "floor_f32"}, tensor<17xf32> {jax.result_info = "ceil_f32"},
                             tensor<17xf32> {jax.result_info = "round_nearest_even_f32"}, tensor<17xf32> {jax.result_info = "round_nearest_afz_f32"},
                             tensor<16xf64> {jax.result_info = "floor_f64"}, tensor<16xf64> {jax.result_info = "ceil_f64"},
                             tensor<16xf64> {jax.result_info = "round_nearest_even_f64"}, tensor<16xf64> {jax.result_info = "round_nearest_afz_f64"},
                             tensor<10xi1> {jax.result_info = "is_finite_f32"}, tensor<9xi1> {jax.result_info = "is_finite_f64"},
                             tensor<8xf32> {jax.result_info = "clamp_scalar_f32"}, tensor<8xf32> {jax.result_info = "clamp_tensor_f32"},
                             tensor<7xi32> {jax.result_info = "clamp_i32"}) {
  // log1p f32: 0 -> 0, -0 -> -0 (sign kept), 1e-10 -> 1.00000001e-10 (log(1 + x) would give 0),
  // 0.5 -> 0.405465096, -0.5 -> -0.693147182, 3 -> ln 4 = 1.38629436, 100 -> 4.61512041,
  // 1e30 -> 69.0775528 (large), -1 -> -inf, -2.3 -> NaN (below -1), inf -> inf, -inf -> NaN, NaN -> NaN
  %l1p_in_f32 = stablehlo.constant dense<[0.0, -0.0, 1.0e-10, 0.5, -0.5, 3.0, 100.0, 1.0e30, -1.0, -2.3, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<13xf32>
  %log1p_f32 = stablehlo.log_plus_one %l1p_in_f32 : tensor<13xf32>
  // log1p f64: the same operands, 1e-10 -> 9.999999999500001e-11 (log(1 + x) would give 1.000000082690371e-10),
  // 1e300 -> 690.7755278982137, and 5e-324 (the smallest subnormal) -> 5e-324
  %l1p_in_f64 = stablehlo.constant dense<[0.0, -0.0, 1.0e-10, 0.5, -0.5, 3.0, 100.0, 1.0e300, -1.0, -2.3, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x0000000000000001]> : tensor<14xf64>
  %log1p_f64 = stablehlo.log_plus_one %l1p_in_f64 : tensor<14xf64>
  // expm1 f32: 0 -> 0, -0 -> -0 (sign kept), +-1e-10 -> 1.00000001e-10, -1.00000001e-10 (exp(x) - 1 would give 0),
  // 0.5 -> 0.648721278, -2.3 -> -0.899741173, 3 -> 19.085537, 88 -> 1.65163627e+38 (large, finite),
  // 100 -> inf (overflow), -100 -> -1 (rounded), inf -> inf, -inf -> -1, NaN -> NaN
  %em1_in_f32 = stablehlo.constant dense<[0.0, -0.0, 1.0e-10, -1.0e-10, 0.5, -2.3, 3.0, 88.0, 100.0, -100.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<13xf32>
  %expm1_f32 = stablehlo.exponential_minus_one %em1_in_f32 : tensor<13xf32>
  // expm1 f64: 1e-10 -> 1.00000000005e-10 (exp(x) - 1 would give 1.000000082740371e-10), -1e-10 -> -9.999999999500001e-11,
  // 100 -> 2.6881171418161356e+43, 709 -> 8.218407461554972e+307 (large, finite), 710 -> inf (overflow), -800 -> -1
  %em1_in_f64 = stablehlo.constant dense<[0.0, -0.0, 1.0e-10, -1.0e-10, 0.5, -2.3, 3.0, 100.0, 709.0, 710.0, -800.0, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000]> : tensor<14xf64>
  %expm1_f64 = stablehlo.exponential_minus_one %em1_in_f64 : tensor<14xf64>
  // sin, cos f32: 0 -> 0 and 1, -0 -> -0 (sign kept) and 1, 1e-10 -> 1.00000001e-10 and 1;
  // 0.5 -> 0.47942555 and 0.87758255, -2.3 -> -0.745705247 and -0.666275978,
  // 3 -> 0.141120002 and -0.989992499, 100 -> -0.506365657 and 0.862318873;
  // 1e10 (an f32 integer, needs an accurate reduction by pi/2) -> -0.487506032 and 0.873119652;
  // inf, -inf, NaN -> NaN
  %trig_in_f32 = stablehlo.constant dense<[0.0, -0.0, 1.0e-10, 0.5, -2.3, 3.0, 100.0, 1.0e10, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<11xf32>
  %sin_f32 = stablehlo.sine %trig_in_f32 : tensor<11xf32>
  %cos_f32 = stablehlo.cosine %trig_in_f32 : tensor<11xf32>
  // sin, cos f64: the same, but 1e22 (the classic large argument) -> -0.8522008497671888 and 0.523214785395139
  %trig_in_f64 = stablehlo.constant dense<[0.0, -0.0, 1.0e-10, 0.5, -2.3, 3.0, 100.0, 1.0e22, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000]> : tensor<11xf64>
  %sin_f64 = stablehlo.sine %trig_in_f64 : tensor<11xf64>
  %cos_f64 = stablehlo.cosine %trig_in_f64 : tensor<11xf64>
  // rounding f32 operand: halves 0.5, 1.5, 2.5, -0.5, -1.5, -2.5; -0; -0.3; 0.7;
  // 0x3EFFFFFF = 0.49999997 (the f32 below 0.5: floor(x + 0.5) rounds it to 1, round_nearest_afz gives 0);
  // 8388607.5 = 2^23 - 0.5 and its negative (the last f32 halves: ties to 8388608 / -8388608 both ways);
  // 8388609 = 2^23 + 1 (an integer: adding and subtracting 2^23 would lose it); 0x80000001 = -1.4e-45
  // (the smallest negative subnormal: floor -1, the rest -0); inf, -inf, NaN pass through.
  // floor: [0, 1, 2, -1, -2, -3, -0, -1, 0, 0, 8388607, -8388608, 8388609, -1, inf, -inf, NaN]
  // ceil: [1, 2, 3, -0, -1, -2, -0, -0, 1, 1, 8388608, -8388607, 8388609, -0, inf, -inf, NaN]
  // round_nearest_even: [0, 2, 2, -0, -2, -2, -0, -0, 1, 0, 8388608, -8388608, 8388609, -0, inf, -inf, NaN]
  // round_nearest_afz: [1, 2, 3, -1, -2, -3, -0, -0, 1, 0, 8388608, -8388608, 8388609, -0, inf, -inf, NaN]
  %rnd_in_f32 = stablehlo.constant dense<[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, -0.3, 0.7, 0x3EFFFFFF, 8388607.5, -8388607.5, 8388609.0, 0x80000001, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<17xf32>
  %floor_f32 = stablehlo.floor %rnd_in_f32 : tensor<17xf32>
  %ceil_f32 = stablehlo.ceil %rnd_in_f32 : tensor<17xf32>
  %round_nearest_even_f32 = stablehlo.round_nearest_even %rnd_in_f32 : tensor<17xf32>
  %round_nearest_afz_f32 = stablehlo.round_nearest_afz %rnd_in_f32 : tensor<17xf32>
  // rounding f64 operand: 0.5, 2.5, -0.5, -2.5, -0, -0.3, -0.4; 0x3FDFFFFFFFFFFFFF = 0.49999999999999994
  // (the double below 0.5); 4503599627370495.5 = 2^52 - 0.5 and its negative (the last f64 halves);
  // 2^53 = 9007199254740992 and 1e300 (integers); 0x8000000000000001 = -5e-324; inf, -inf, NaN.
  // floor: [0, 2, -1, -3, -0, -1, -1, 0, 4503599627370495, -4503599627370496, 2^53, 1e300, -1, inf, -inf, NaN]
  // ceil: [1, 3, -0, -2, -0, -0, -0, 1, 4503599627370496, -4503599627370495, 2^53, 1e300, -0, inf, -inf, NaN]
  // round_nearest_even: [0, 2, -0, -2, -0, -0, -0, 0, 4503599627370496, -4503599627370496, ..., -0, inf, -inf, NaN]
  // round_nearest_afz: [1, 3, -1, -3, -0, -0, -0, 0, 4503599627370496, -4503599627370496, ..., -0, inf, -inf, NaN]
  %rnd_in_f64 = stablehlo.constant dense<[0.5, 2.5, -0.5, -2.5, -0.0, -0.3, -0.4, 0x3FDFFFFFFFFFFFFF, 4503599627370495.5, -4503599627370495.5, 9007199254740992.0, 1.0e300, 0x8000000000000001, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000]> : tensor<16xf64>
  %floor_f64 = stablehlo.floor %rnd_in_f64 : tensor<16xf64>
  %ceil_f64 = stablehlo.ceil %rnd_in_f64 : tensor<16xf64>
  %round_nearest_even_f64 = stablehlo.round_nearest_even %rnd_in_f64 : tensor<16xf64>
  %round_nearest_afz_f64 = stablehlo.round_nearest_afz %rnd_in_f64 : tensor<16xf64>
  // is_finite f32: 0, -0, 1e38, FLT_MAX (0x7F7FFFFF), the smallest subnormal 1e-45, -1.5 -> true;
  // inf, -inf, NaN, a signaling NaN (0x7F800001) -> false
  %fin_in_f32 = stablehlo.constant dense<[0.0, -0.0, 1.0e38, 0x7F7FFFFF, 0x00000001, -1.5, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001]> : tensor<10xf32>
  %is_finite_f32 = stablehlo.is_finite %fin_in_f32 : (tensor<10xf32>) -> tensor<10xi1>
  // is_finite f64: 0, -0, 1e308, DBL_MAX, 5e-324 -> true; inf, -inf, NaN, -NaN -> false
  %fin_in_f64 = stablehlo.constant dense<[0.0, -0.0, 1.0e308, 0x7FEFFFFFFFFFFFFF, 0x0000000000000001, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000]> : tensor<9xf64>
  %is_finite_f64 = stablehlo.is_finite %fin_in_f64 : (tensor<9xf64>) -> tensor<9xi1>
  // clamp f32, scalar bounds -1 and 1: -2 -> -1, -0.5, 0.75 stay, 3 -> 1, NaN -> NaN, inf -> 1, -inf -> -1,
  // -0 -> -0 (maximum(-0, -1) = -0, minimum(-0, 1) = -0)
  %clamp_lo = stablehlo.constant dense<-1.0> : tensor<f32>
  %clamp_hi = stablehlo.constant dense<1.0> : tensor<f32>
  %clamp_x = stablehlo.constant dense<[-2.0, -0.5, 0.75, 3.0, 0x7FC00000, 0x7F800000, 0xFF800000, -0.0]> : tensor<8xf32>
  %clamp_scalar_f32 = stablehlo.clamp %clamp_lo, %clamp_x, %clamp_hi : (tensor<f32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  // clamp f32, bounds of the operand's shape, element by element (min, operand, max -> result):
  // (0, -0, 1) -> +0 (IEEE maximum: -0 < +0); (0, 0.5, 1) -> 0.5; (-1, -5, 1) -> -1;
  // (3, 5, 1) -> 1 (min > max: the formula gives max); (NaN, 1, 2) -> NaN; (-inf, -3, inf) -> -3;
  // (0, 2, NaN) -> NaN; (-2, inf, 2) -> 2
  %clamp_min = stablehlo.constant dense<[0.0, 0.0, -1.0, 3.0, 0x7FC00000, 0xFF800000, 0.0, -2.0]> : tensor<8xf32>
  %clamp_op = stablehlo.constant dense<[-0.0, 0.5, -5.0, 5.0, 1.0, -3.0, 2.0, 0x7F800000]> : tensor<8xf32>
  %clamp_max = stablehlo.constant dense<[1.0, 1.0, 1.0, 1.0, 2.0, 0x7F800000, 0x7FC00000, 2.0]> : tensor<8xf32>
  %clamp_tensor_f32 = stablehlo.clamp %clamp_min, %clamp_op, %clamp_max : tensor<8xf32>
  // clamp i32, scalar bounds -5 and 10: INT32_MIN, -6, -5 -> -5; 0 stays; 10, 11, INT32_MAX -> 10
  %clamp_ilo = stablehlo.constant dense<-5> : tensor<i32>
  %clamp_ihi = stablehlo.constant dense<10> : tensor<i32>
  %clamp_ix = stablehlo.constant dense<[-2147483648, -6, -5, 0, 10, 11, 2147483647]> : tensor<7xi32>
  %clamp_i32 = stablehlo.clamp %clamp_ilo, %clamp_ix, %clamp_ihi : (tensor<i32>, tensor<7xi32>, tensor<i32>) -> tensor<7xi32>
  return %log1p_f32, %log1p_f64, %expm1_f32, %expm1_f64, %sin_f32, %cos_f32, %sin_f64, %cos_f64, %floor_f32, %ceil_f32, %round_nearest_even_f32, %round_nearest_afz_f32, %floor_f64, %ceil_f64, %round_nearest_even_f64, %round_nearest_afz_f64, %is_finite_f32, %is_finite_f64, %clamp_scalar_f32, %clamp_tensor_f32, %clamp_i32 : tensor<13xf32>, tensor<14xf64>, tensor<13xf32>, tensor<14xf64>, tensor<11xf32>, tensor<11xf32>, tensor<11xf64>, tensor<11xf64>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<17xf32>, tensor<16xf64>, tensor<16xf64>, tensor<16xf64>, tensor<16xf64>, tensor<10xi1>, tensor<9xi1>, tensor<8xf32>, tensor<8xf32>, tensor<7xi32>
}
