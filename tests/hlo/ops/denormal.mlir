// Subnormal (denormal) floats are values like any other: IEEE-754 arithmetic
// keeps them (StableHLO spec "Floating-point exceptions": underflow gives the
// default, gradual-underflow result). A flush-to-zero mode (FTZ/DAZ, or
// -ffast-math) would turn each of these into zero.
func.func public @main() -> (tensor<4xf32> {jax.result_info = "mul_f32"}, tensor<4xf32> {jax.result_info = "add_f32"},
                             tensor<2xf32> {jax.result_info = "div_f32"}, tensor<2xf64> {jax.result_info = "add_f64"},
                             tensor<2xf32> {jax.result_info = "sum_f32"}, tensor<2xf32> {jax.result_info = "max_f32"},
                             tensor<2xbf16> {jax.result_info = "mul_bf16"}) {
  // 1e-40 * 1 = 1e-40 (the f32 nearest to 1e-40 is the subnormal 9.99994610e-41, unchanged);
  // 1e-45 * 1 = 1e-45 (2^-149, the smallest subnormal); 2^-126 * 0.5 = 2^-127 = 5.87747175e-39;
  // 1e-40 * -1 = -9.99994610e-41
  %a = stablehlo.constant dense<[1.0e-40, 0x00000001, 1.17549435e-38, 1.0e-40]> : tensor<4xf32>
  %b = stablehlo.constant dense<[1.0, 1.0, 0.5, -1.0]> : tensor<4xf32>
  %m = stablehlo.multiply %a, %b : tensor<4xf32>
  // 2^-149 + 0 = 2^-149; 2^-149 + 2^-149 = 2^-148 = 2.80259693e-45; 2^-126 - 2^-149 = 0x007FFFFF
  // (the largest subnormal, 1.17549421e-38); 2^-149 - 2^-149 = +0
  %c = stablehlo.constant dense<[0x00000001, 0x00000001, 1.17549435e-38, 0x00000001]> : tensor<4xf32>
  %d = stablehlo.constant dense<[0.0, 0x00000001, 0x80000001, 0x80000001]> : tensor<4xf32>
  %s = stablehlo.add %c, %d : tensor<4xf32>
  // subnormal / 2: 2^-148 / 2 = 2^-149; 2^-149 / 2 is a tie between 0 and 2^-149 -> 0 (even)
  %e = stablehlo.constant dense<[0x00000002, 0x00000001]> : tensor<2xf32>
  %two = stablehlo.constant dense<2.0> : tensor<2xf32>
  %q = stablehlo.divide %e, %two : tensor<2xf32>
  // f64: 5e-324 (2^-1074) + 5e-324 = 1e-323; 2.2250738585072014e-308 - 5e-324 = 2.225073858507201e-308
  %f = stablehlo.constant dense<[5.0e-324, 2.2250738585072014e-308]> : tensor<2xf64>
  %g = stablehlo.constant dense<[5.0e-324, -5.0e-324]> : tensor<2xf64>
  %sd = stablehlo.add %f, %g : tensor<2xf64>
  // a reduction keeps them: sum of [2^-149, 2^-149, 2^-149] = 3 * 2^-149 = 4.20389539e-45 (exact)
  %h = stablehlo.constant dense<[[0x00000001, 0x00000001, 0x00000001], [1.0e-40, 0.0, -1.0e-40]]> : tensor<2x3xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%h init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  // maximum of a subnormal and zero is the subnormal; of -subnormal and -0 is -0
  %i = stablehlo.constant dense<[0x00000001, 0x80000001]> : tensor<2xf32>
  %j = stablehlo.constant dense<[0.0, -0.0]> : tensor<2xf32>
  %mx = stablehlo.maximum %i, %j : tensor<2xf32>
  // bf16 holds f32's subnormals at 8 bits: 2^-133 (0x0001) * 1 = 2^-133 = 9.18354962e-41
  %k = stablehlo.constant dense<[0x0001, 0x0040]> : tensor<2xbf16>
  %one = stablehlo.constant dense<1.0> : tensor<2xbf16>
  %mb = stablehlo.multiply %k, %one : tensor<2xbf16>
  return %m, %s, %q, %sd, %r, %mx, %mb : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf64>, tensor<2xf32>, tensor<2xf32>, tensor<2xbf16>
}
