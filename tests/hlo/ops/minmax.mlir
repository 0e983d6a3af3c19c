// maximum, minimum: StableHLO spec "maximum"/"minimum": IEEE-754 maximum and
// minimum for floats (a NaN operand gives NaN; -0 is below +0), integer max
// and min for integers, OR and AND for booleans.
// lhs = [1, NaN, 2, -0, +0, -inf, inf, 3]
// rhs = [2, 1, NaN, +0, -0, 5, NaN, 3]
func.func public @main() -> (tensor<8xf32> {jax.result_info = "max_f32"}, tensor<8xf32> {jax.result_info = "min_f32"},
                             tensor<3xi32> {jax.result_info = "max_i32"}, tensor<3xi32> {jax.result_info = "min_i32"},
                             tensor<4xi1> {jax.result_info = "max_i1"}, tensor<4xi1> {jax.result_info = "min_i1"},
                             tensor<2xui8> {jax.result_info = "max_ui8"}, tensor<3xf64> {jax.result_info = "min_f64"},
                             tensor<2xbf16> {jax.result_info = "max_bf16"}) {
  %a = stablehlo.constant dense<[1.0, 0x7FC00000, 2.0, -0.0, 0.0, 0xFF800000, 0x7F800000, 3.0]> : tensor<8xf32>
  %b = stablehlo.constant dense<[2.0, 1.0, 0x7FC00000, 0.0, -0.0, 5.0, 0x7FC00000, 3.0]> : tensor<8xf32>
  %mx = stablehlo.maximum %a, %b : tensor<8xf32>
  %mn = stablehlo.minimum %a, %b : tensor<8xf32>
  %c = stablehlo.constant dense<[-2147483648, 7, -1]> : tensor<3xi32>
  %d = stablehlo.constant dense<[2147483647, -7, -1]> : tensor<3xi32>
  %mxi = stablehlo.maximum %c, %d : tensor<3xi32>
  %mni = stablehlo.minimum %c, %d : tensor<3xi32>
  // booleans: maximum = OR, minimum = AND
  %e = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>
  %f = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>
  %mxb = stablehlo.maximum %e, %f : tensor<4xi1>
  %mnb = stablehlo.minimum %e, %f : tensor<4xi1>
  // ui8 as unsigned: max(200, 100) = 200, max(0, 255) = 255
  %g = stablehlo.constant dense<[200, 0]> : tensor<2xui8>
  %h = stablehlo.constant dense<[100, 255]> : tensor<2xui8>
  %mxu = stablehlo.maximum %g, %h : tensor<2xui8>
  // f64: min(NaN, 1) = NaN, min(+0, -0) = -0, min(1e-320, 0) = 0 (a subnormal above zero)
  %i = stablehlo.constant dense<[0x7FF8000000000000, 0.0, 1.0e-320]> : tensor<3xf64>
  %j = stablehlo.constant dense<[1.0, -0.0, 0.0]> : tensor<3xf64>
  %mnd = stablehlo.minimum %i, %j : tensor<3xf64>
  // bf16: max(NaN, 1) = NaN, max(-0, +0) = +0
  %k = stablehlo.constant dense<[0x7FC0, -0.0]> : tensor<2xbf16>
  %l = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xbf16>
  %mxh = stablehlo.maximum %k, %l : tensor<2xbf16>
  return %mx, %mn, %mxi, %mni, %mxb, %mnb, %mxu, %mnd, %mxh : tensor<8xf32>, tensor<8xf32>, tensor<3xi32>, tensor<3xi32>, tensor<4xi1>, tensor<4xi1>, tensor<2xui8>, tensor<3xf64>, tensor<2xbf16>
}
