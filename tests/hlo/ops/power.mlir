// power: StableHLO spec "power": integer exponentiation for integers,
// IEEE-754 pow for floats. IEEE-754 pow (section 9.2.1): pow(x, +-0) = 1
// for any x, NaN included; pow(+-0, y) = inf for an odd integer y < 0;
// pow(x < 0, y) = NaN for a finite non-integer y; pow(-2, 3) = -8 (odd
// integer exponent keeps the sign); pow(1, NaN) = 1; pow(-inf, 3) = -inf.
// Integers: 0^0 = 1; x^-n (n > 0) is the integer part of 1/x^n: 0 unless
// |x| = 1 (then 1 or -1 by the parity of n); the spec leaves overflow to
// the implementation, and carve wraps: 2^31 in i32 is INT32_MIN.
func.func public @main() -> (tensor<10xf32> {jax.result_info = "pow_f32"}, tensor<9xi32> {jax.result_info = "pow_i32"},
                             tensor<2xi64> {jax.result_info = "pow_i64"}, tensor<2xf64> {jax.result_info = "pow_f64"}) {
  // 2^10 = 1024, -2^3 = -8, 0^0 = 1, NaN^0 = 1, 1^NaN = 1, 0^-1 = inf, -0^-1 = -inf,
  // (-8)^(1/3) = NaN, 4^0.5 = 2, (-inf)^3 = -inf
  %a = stablehlo.constant dense<[2.0, -2.0, 0.0, 0x7FC00000, 1.0, 0.0, -0.0, -8.0, 4.0, 0xFF800000]> : tensor<10xf32>
  %b = stablehlo.constant dense<[10.0, 3.0, 0.0, 0.0, 0x7FC00000, -1.0, -1.0, 0.333333343, 0.5, 3.0]> : tensor<10xf32>
  %pf = stablehlo.power %a, %b : tensor<10xf32>
  // 2^10 = 1024, (-2)^3 = -8, 0^0 = 1, 2^-1 = 0, (-1)^-3 = -1, 1^-5 = 1, (-3)^4 = 81, 2^31 wraps to INT32_MIN, 0^5 = 0
  %c = stablehlo.constant dense<[2, -2, 0, 2, -1, 1, -3, 2, 0]> : tensor<9xi32>
  %d = stablehlo.constant dense<[10, 3, 0, -1, -3, -5, 4, 31, 5]> : tensor<9xi32>
  %pi = stablehlo.power %c, %d : tensor<9xi32>
  // 3^39 = 4052555153018976267 (fits i64); (-1)^-4 = 1
  %e = stablehlo.constant dense<[3, -1]> : tensor<2xi64>
  %f = stablehlo.constant dense<[39, -4]> : tensor<2xi64>
  %pl = stablehlo.power %e, %f : tensor<2xi64>
  // f64: 2^-1074 is the smallest subnormal, exact; 10^-2 = 0.01 (correctly rounded)
  %g = stablehlo.constant dense<[2.0, 10.0]> : tensor<2xf64>
  %h = stablehlo.constant dense<[-1074.0, -2.0]> : tensor<2xf64>
  %pd = stablehlo.power %g, %h : tensor<2xf64>
  return %pf, %pi, %pl, %pd : tensor<10xf32>, tensor<9xi32>, tensor<2xi64>, tensor<2xf64>
}
