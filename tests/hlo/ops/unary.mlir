// abs, sign, sqrt, rsqrt: StableHLO spec "abs" (IEEE-754 abs for floats,
// integer modulus for signed integers), "sign" (its Python definition: NaN
// for NaN, -0 for -0, +0 for +0, else -1 or 1; integers -1, 0, 1), "sqrt"
// and "rsqrt" (IEEE-754 squareRoot and rSqrt: sqrt(-0) = -0, sqrt(x < 0) =
// NaN, rsqrt(+0) = inf, rsqrt(-0) = -inf, rsqrt(inf) = 0).
// abs(INT_MIN) overflows i32; the spec leaves overflow to the implementation
// ("Errors") and carve wraps to INT_MIN, as XLA does.
func.func public @main() -> (tensor<5xf32> {jax.result_info = "abs_f32"}, tensor<4xi32> {jax.result_info = "abs_i32"},
                             tensor<2xi8> {jax.result_info = "abs_i8"}, tensor<7xf32> {jax.result_info = "sign_f32"},
                             tensor<4xi32> {jax.result_info = "sign_i32"}, tensor<7xf32> {jax.result_info = "sqrt_f32"},
                             tensor<6xf32> {jax.result_info = "rsqrt_f32"}, tensor<2xf64> {jax.result_info = "sqrt_f64"},
                             tensor<3xf64> {jax.result_info = "sign_f64"}) {
  // |-0| = +0, |-inf| = inf, |-2.5| = 2.5, |NaN| = NaN, |3| = 3
  %a = stablehlo.constant dense<[-0.0, 0xFF800000, -2.5, 0xFFC00000, 3.0]> : tensor<5xf32>
  %absf = stablehlo.abs %a : tensor<5xf32>
  // |INT32_MIN| wraps to INT32_MIN; |-7| = 7; |0| = 0; |INT32_MAX| = INT32_MAX
  %b = stablehlo.constant dense<[-2147483648, -7, 0, 2147483647]> : tensor<4xi32>
  %absi = stablehlo.abs %b : tensor<4xi32>
  // i8: |-128| wraps to -128; |-127| = 127
  %c = stablehlo.constant dense<[-128, -127]> : tensor<2xi8>
  %abs8 = stablehlo.abs %c : tensor<2xi8>
  // sign: NaN -> NaN, -0 -> -0, +0 -> +0, -3 -> -1, 1e-45 (subnormal) -> 1, -inf -> -1, inf -> 1
  %d = stablehlo.constant dense<[0x7FC00000, -0.0, 0.0, -3.0, 0x00000001, 0xFF800000, 0x7F800000]> : tensor<7xf32>
  %sgnf = stablehlo.sign %d : tensor<7xf32>
  %e = stablehlo.constant dense<[-2147483648, -5, 0, 9]> : tensor<4xi32>
  %sgni = stablehlo.sign %e : tensor<4xi32>
  // sqrt: -0 -> -0, +0 -> +0, -1 -> NaN, 4 -> 2, inf -> inf, 2 -> 1.41421354 (correctly rounded),
  // 1e-44 (subnormal, 7 * 2^-149) -> 9.90408493e-23 (correctly rounded)
  %f = stablehlo.constant dense<[-0.0, 0.0, -1.0, 4.0, 0x7F800000, 2.0, 0x00000007]> : tensor<7xf32>
  %sq = stablehlo.sqrt %f : tensor<7xf32>
  // rsqrt: +0 -> inf, -0 -> -inf, 4 -> 0.5, inf -> +0, -1 -> NaN, 2 -> 0.707106769 (within 1 ulp)
  %g = stablehlo.constant dense<[0.0, -0.0, 4.0, 0x7F800000, -1.0, 2.0]> : tensor<6xf32>
  %rsq = stablehlo.rsqrt %g : tensor<6xf32>
  // f64 sqrt: -0 -> -0, 2 -> 1.4142135623730951
  %h = stablehlo.constant dense<[-0.0, 2.0]> : tensor<2xf64>
  %sqd = stablehlo.sqrt %h : tensor<2xf64>
  // f64 sign: -0 -> -0, NaN -> NaN, -1e-310 (subnormal) -> -1
  %i = stablehlo.constant dense<[-0.0, 0x7FF8000000000000, -1.0e-310]> : tensor<3xf64>
  %sgnd = stablehlo.sign %i : tensor<3xf64>
  return %absf, %absi, %abs8, %sgnf, %sgni, %sq, %rsq, %sqd, %sgnd : tensor<5xf32>, tensor<4xi32>, tensor<2xi8>, tensor<7xf32>, tensor<4xi32>, tensor<7xf32>, tensor<6xf32>, tensor<2xf64>, tensor<3xf64>
}
