// exponential, log, tanh, logistic: StableHLO spec "exponential", "log",
// "tanh" (IEEE-754 exp, log, tanh) and "logistic" (1 / (1 + exp(-x))).
// The special values are IEEE-754's (9.2): exp(0) = 1, exp(-inf) = +0,
// exp(inf) = inf; log(+-0) = -inf, log(x < 0) = NaN, log(1) = +0,
// log(inf) = inf; tanh(+-0) = +-0, tanh(+-inf) = +-1; NaN stays NaN.
// Other values are the exact function rounded to f32; the results may be
// 1 ulp away (the spec does not ask for correct rounding of these).
func.func public @main() -> (tensor<9xf32> {jax.result_info = "exp_f32"}, tensor<8xf32> {jax.result_info = "log_f32"},
                             tensor<8xf32> {jax.result_info = "tanh_f32"}, tensor<7xf32> {jax.result_info = "logistic_f32"},
                             tensor<3xf64> {jax.result_info = "exp_f64"}, tensor<3xf64> {jax.result_info = "log_f64"},
                             tensor<2xbf16> {jax.result_info = "exp_bf16"}) {
  // exp: 0 -> 1, -0 -> 1, 1 -> e = 2.71828175 (f32), -inf -> 0, inf -> inf, NaN -> NaN, 89 -> inf (above ln(FLT_MAX) = 88.72),
  // -100 -> e^-100 = 3.78350585e-44 (a subnormal, rounded to a multiple of 2^-149), -87 -> 1.64581145e-38
  %a = stablehlo.constant dense<[0.0, -0.0, 1.0, 0xFF800000, 0x7F800000, 0x7FC00000, 89.0, -100.0, -87.0]> : tensor<9xf32>
  %ex = stablehlo.exponential %a : tensor<9xf32>
  // log: 0 -> -inf, -0 -> -inf, -1 -> NaN, 1 -> 0, inf -> inf, NaN -> NaN, 2 -> 0.693147182,
  // 1e-45 (smallest subnormal, 2^-149) -> -149 ln 2 = -103.278931
  %b = stablehlo.constant dense<[0.0, -0.0, -1.0, 1.0, 0x7F800000, 0x7FC00000, 2.0, 0x00000001]> : tensor<8xf32>
  %lg = stablehlo.log %b : tensor<8xf32>
  // tanh: 0 -> 0, -0 -> -0, inf -> 1, -inf -> -1, NaN -> NaN, 0.5 -> 0.462117165, 20 -> 1, -1e-30 -> -1e-30
  %c = stablehlo.constant dense<[0.0, -0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 0.5, 20.0, -1.0e-30]> : tensor<8xf32>
  %th = stablehlo.tanh %c : tensor<8xf32>
  // logistic: 0 -> 0.5, inf -> 1, -inf -> 0, NaN -> NaN, 2 -> 0.880797088, -100 -> e^-100 / (1 + e^-100) = 3.78350585e-44 (subnormal),
  // 100 -> 1
  %d = stablehlo.constant dense<[0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 2.0, -100.0, 100.0]> : tensor<7xf32>
  %lo = stablehlo.logistic %d : tensor<7xf32>
  // f64: exp(1) = 2.718281828459045, exp(-745) = 5e-324 (the smallest subnormal), exp(710) = inf
  %e = stablehlo.constant dense<[1.0, -745.0, 710.0]> : tensor<3xf64>
  %exd = stablehlo.exponential %e : tensor<3xf64>
  // f64: log(0) = -inf, log(-1) = NaN, log(10) = 2.302585092994046
  %f = stablehlo.constant dense<[0.0, -1.0, 10.0]> : tensor<3xf64>
  %lgd = stablehlo.log %f : tensor<3xf64>
  // bf16: exp(1) = e rounded to bf16 (8 bits) = 2.71875; exp(-inf) = 0
  %g = stablehlo.constant dense<[1.0, 0xFF80]> : tensor<2xbf16>
  %exb = stablehlo.exponential %g : tensor<2xbf16>
  return %ex, %lg, %th, %lo, %exd, %lgd, %exb : tensor<9xf32>, tensor<8xf32>, tensor<8xf32>, tensor<7xf32>, tensor<3xf64>, tensor<3xf64>, tensor<2xbf16>
}
