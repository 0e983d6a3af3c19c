// Written by tests/hlo/special_reference.py; the expected values are mpmath's
// (erf_inv, lgamma, digamma) and bit walks (next_after): see that file.
// Poles, +-1, +-inf, NaN, zeros of either sign, subnormal steps, and digamma near its poles
// (where pi must keep f64's digits).
func.func public @main() -> (tensor<12xf64> {jax.result_info = "erf_inv_f64"}, tensor<12xf32> {jax.result_info = "erf_inv_f32"}, tensor<12xbf16> {jax.result_info = "erf_inv_bf16"}, tensor<14xf64> {jax.result_info = "lgamma_f64"}, tensor<14xf32> {jax.result_info = "lgamma_f32"}, tensor<14xbf16> {jax.result_info = "lgamma_bf16"}, tensor<12xf64> {jax.result_info = "digamma_f64"}, tensor<12xf32> {jax.result_info = "digamma_f32"}, tensor<12xbf16> {jax.result_info = "digamma_bf16"}, tensor<13xf64> {jax.result_info = "next_after_f64"}, tensor<13xf32> {jax.result_info = "next_after_f32"}, tensor<13xbf16> {jax.result_info = "next_after_bf16"}, tensor<13xf16> {jax.result_info = "next_after_f16"}, tensor<20xf32> {jax.result_info = "reduce_precision_e8m7"}, tensor<20xf32> {jax.result_info = "reduce_precision_e5m10"}, tensor<20xf32> {jax.result_info = "reduce_precision_e4m3"}, tensor<20xf32> {jax.result_info = "reduce_precision_e11m52"}, tensor<20xf32> {jax.result_info = "reduce_precision_e5m0"}, tensor<f64> {jax.result_info = "log2_f64"}) {
  %erf_inv_f64_x = stablehlo.constant dense<[-1.0, -0.9999999, -0.5, -1e-10, 0.0, 0.25, 0.5, 0.75, 0.999, 0.9999990463256836, 1.0, 1.5]> : tensor<12xf64>
  %erf_inv_f64 = chlo.erf_inv %erf_inv_f64_x : tensor<12xf64> -> tensor<12xf64>
  %erf_inv_f32_x = stablehlo.constant dense<[-1.0, -0.9999998807907104, -0.5, -1.000000013351432e-10, 0.0, 0.25, 0.5, 0.75, 0.9990000128746033, 0.9999990463256836, 1.0, 1.5]> : tensor<12xf32>
  %erf_inv_f32 = chlo.erf_inv %erf_inv_f32_x : tensor<12xf32> -> tensor<12xf32>
  %erf_inv_bf16_x = stablehlo.constant dense<[-1.0, -1.0, -0.5, -1.000444171950221e-10, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.5]> : tensor<12xbf16>
  %erf_inv_bf16 = chlo.erf_inv %erf_inv_bf16_x : tensor<12xbf16> -> tensor<12xbf16>
  %lgamma_f64_x = stablehlo.constant dense<[0xFFF0000000000000, -2.5, -1.0, -0.75, -1e-06, 1e-08, 0.5, 1.25, 1.5, 3.7, 10.0, 171.5, 10000000000.0, 0x7FF0000000000000]> : tensor<14xf64>
  %lgamma_f64 = chlo.lgamma %lgamma_f64_x : tensor<14xf64> -> tensor<14xf64>
  %lgamma_f32_x = stablehlo.constant dense<[0xFF800000, -2.5, -1.0, -0.75, -9.999999974752427e-07, 9.99999993922529e-09, 0.5, 1.25, 1.5, 3.700000047683716, 10.0, 171.5, 10000000000.0, 0x7F800000]> : tensor<14xf32>
  %lgamma_f32 = chlo.lgamma %lgamma_f32_x : tensor<14xf32> -> tensor<14xf32>
  %lgamma_bf16_x = stablehlo.constant dense<[0xFF80, -2.5, -1.0, -0.75, -9.98377799987793e-07, 1.0011717677116394e-08, 0.5, 1.25, 1.5, 3.703125, 10.0, 172.0, 9999220736.0, 0x7F80]> : tensor<14xbf16>
  %lgamma_bf16 = chlo.lgamma %lgamma_bf16_x : tensor<14xbf16> -> tensor<14xbf16>
  %digamma_f64_x = stablehlo.constant dense<[-7.003, -2.0, -0.999, -0.026, 0.0, 1e-06, 0.5, 1.0, 2.5, 10.0, 1000.0, 0x7FF0000000000000]> : tensor<12xf64>
  %digamma_f64 = chlo.digamma %digamma_f64_x : tensor<12xf64> -> tensor<12xf64>
  %digamma_f32_x = stablehlo.constant dense<[-7.002999782562256, -2.0, -0.9990000128746033, -0.026000000536441803, 0.0, 9.999999974752427e-07, 0.5, 1.0, 2.5, 10.0, 1000.0, 0x7F800000]> : tensor<12xf32>
  %digamma_f32 = chlo.digamma %digamma_f32_x : tensor<12xf32> -> tensor<12xf32>
  %digamma_bf16_x = stablehlo.constant dense<[-7.0, -2.0, -1.0, -0.0260009765625, 0.0, 9.98377799987793e-07, 0.5, 1.0, 2.5, 10.0, 1000.0, 0x7F80]> : tensor<12xbf16>
  %digamma_bf16 = chlo.digamma %digamma_bf16_x : tensor<12xbf16> -> tensor<12xbf16>
  %next_after_f64_x = stablehlo.constant dense<[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 2.5, 0x7FF8000000000000, 1.0, 0x7FF0000000000000, -3.0, 1e-30]> : tensor<13xf64>
  %next_after_f64_y = stablehlo.constant dense<[2.0, 0.0, 0.0, -2.0, 1.0, -1.0, 1.0, 2.5, 1.0, 0x7FF8000000000000, 0.0, 0x7FF0000000000000, -1.0]> : tensor<13xf64>
  %next_after_f64 = chlo.next_after %next_after_f64_x, %next_after_f64_y : tensor<13xf64>, tensor<13xf64> -> tensor<13xf64>
  %next_after_f32_x = stablehlo.constant dense<[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 2.5, 0x7FC00000, 1.0, 0x7F800000, -3.0, 1.0000000031710769e-30]> : tensor<13xf32>
  %next_after_f32_y = stablehlo.constant dense<[2.0, 0.0, 0.0, -2.0, 1.0, -1.0, 1.0, 2.5, 1.0, 0x7FC00000, 0.0, 0x7F800000, -1.0]> : tensor<13xf32>
  %next_after_f32 = chlo.next_after %next_after_f32_x, %next_after_f32_y : tensor<13xf32>, tensor<13xf32> -> tensor<13xf32>
  %next_after_bf16_x = stablehlo.constant dense<[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 2.5, 0x7FC0, 1.0, 0x7F80, -3.0, 9.98402083170343e-31]> : tensor<13xbf16>
  %next_after_bf16_y = stablehlo.constant dense<[2.0, 0.0, 0.0, -2.0, 1.0, -1.0, 1.0, 2.5, 1.0, 0x7FC0, 0.0, 0x7F80, -1.0]> : tensor<13xbf16>
  %next_after_bf16 = chlo.next_after %next_after_bf16_x, %next_after_bf16_y : tensor<13xbf16>, tensor<13xbf16> -> tensor<13xbf16>
  %next_after_f16_x = stablehlo.constant dense<[1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 2.5, 0x7E00, 1.0, 0x7C00, -3.0, 0.0]> : tensor<13xf16>
  %next_after_f16_y = stablehlo.constant dense<[2.0, 0.0, 0.0, -2.0, 1.0, -1.0, 1.0, 2.5, 1.0, 0x7E00, 0.0, 0x7C00, -1.0]> : tensor<13xf16>
  %next_after_f16 = chlo.next_after %next_after_f16_x, %next_after_f16_y : tensor<13xf16>, tensor<13xf16> -> tensor<13xf16>
  %reduce_precision_e8m7_x = stablehlo.constant dense<[1.0, 1.00390625, 1.01171875, 1.001953125, 1.005859375, -2.7182817459106445, 3.1415927410125732, 65504.0, 65520.0, 100000.0, -100000.0, 6.103515625e-05, 5.999999848427251e-05, -1.0000000031710769e-30, -0.0, 0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 3.3999999521443642e+38]> : tensor<20xf32>
  %reduce_precision_e8m7 = stablehlo.reduce_precision %reduce_precision_e8m7_x, format = e8m7 : tensor<20xf32>
  %reduce_precision_e5m10_x = stablehlo.constant dense<[1.0, 1.00390625, 1.01171875, 1.001953125, 1.005859375, -2.7182817459106445, 3.1415927410125732, 65504.0, 65520.0, 100000.0, -100000.0, 6.103515625e-05, 5.999999848427251e-05, -1.0000000031710769e-30, -0.0, 0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 3.3999999521443642e+38]> : tensor<20xf32>
  %reduce_precision_e5m10 = stablehlo.reduce_precision %reduce_precision_e5m10_x, format = e5m10 : tensor<20xf32>
  %reduce_precision_e4m3_x = stablehlo.constant dense<[1.0, 1.00390625, 1.01171875, 1.001953125, 1.005859375, -2.7182817459106445, 3.1415927410125732, 65504.0, 65520.0, 100000.0, -100000.0, 6.103515625e-05, 5.999999848427251e-05, -1.0000000031710769e-30, -0.0, 0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 3.3999999521443642e+38]> : tensor<20xf32>
  %reduce_precision_e4m3 = stablehlo.reduce_precision %reduce_precision_e4m3_x, format = e4m3 : tensor<20xf32>
  %reduce_precision_e11m52_x = stablehlo.constant dense<[1.0, 1.00390625, 1.01171875, 1.001953125, 1.005859375, -2.7182817459106445, 3.1415927410125732, 65504.0, 65520.0, 100000.0, -100000.0, 6.103515625e-05, 5.999999848427251e-05, -1.0000000031710769e-30, -0.0, 0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 3.3999999521443642e+38]> : tensor<20xf32>
  %reduce_precision_e11m52 = stablehlo.reduce_precision %reduce_precision_e11m52_x, format = e11m52 : tensor<20xf32>
  %reduce_precision_e5m0_x = stablehlo.constant dense<[1.0, 1.00390625, 1.01171875, 1.001953125, 1.005859375, -2.7182817459106445, 3.1415927410125732, 65504.0, 65520.0, 100000.0, -100000.0, 6.103515625e-05, 5.999999848427251e-05, -1.0000000031710769e-30, -0.0, 0.0, 0x7F800000, 0xFF800000, 0x7FC00000, 3.3999999521443642e+38]> : tensor<20xf32>
  %reduce_precision_e5m0 = stablehlo.reduce_precision %reduce_precision_e5m0_x, format = e5m0 : tensor<20xf32>
  %log2_x = stablehlo.constant dense<2.0> : tensor<f64>
  %log2_f64 = stablehlo.log %log2_x : tensor<f64>
  return %erf_inv_f64, %erf_inv_f32, %erf_inv_bf16, %lgamma_f64, %lgamma_f32, %lgamma_bf16, %digamma_f64, %digamma_f32, %digamma_bf16, %next_after_f64, %next_after_f32, %next_after_bf16, %next_after_f16, %reduce_precision_e8m7, %reduce_precision_e5m10, %reduce_precision_e4m3, %reduce_precision_e11m52, %reduce_precision_e5m0, %log2_f64 : tensor<12xf64>, tensor<12xf32>, tensor<12xbf16>, tensor<14xf64>, tensor<14xf32>, tensor<14xbf16>, tensor<12xf64>, tensor<12xf32>, tensor<12xbf16>, tensor<13xf64>, tensor<13xf32>, tensor<13xbf16>, tensor<13xf16>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<f64>
}
