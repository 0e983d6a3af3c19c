// compare: StableHLO spec "compare". FLOAT is IEEE-754's quiet comparisons:
// every comparison with a NaN is false except NE, which is true; -0 == +0.
// TOTALORDER is IEEE-754 totalOrder: -NaN < -inf < -finite < -0 < +0 <
// +finite < inf < +NaN, each NaN equal to itself (bits compared), -0 below +0.
// SIGNED and UNSIGNED compare integers as their types hold them (ui8 200 > 100;
// i1: true > false).
// lhs  = [1, NaN, NaN, -0, 1, 2, -inf, inf]
// rhs  = [1, 1,   NaN, +0, 2, 1, -inf, NaN]
func.func public @main() -> (tensor<8xi1> {jax.result_info = "eq_float"}, tensor<8xi1> {jax.result_info = "ne_float"},
                             tensor<8xi1> {jax.result_info = "lt_float"}, tensor<8xi1> {jax.result_info = "le_float"},
                             tensor<8xi1> {jax.result_info = "gt_float"}, tensor<8xi1> {jax.result_info = "ge_float"},
                             tensor<8xi1> {jax.result_info = "eq_total"}, tensor<8xi1> {jax.result_info = "lt_total"},
                             tensor<8xi1> {jax.result_info = "ge_total"}, tensor<6xi1> {jax.result_info = "lt_total_order"},
                             tensor<4xi1> {jax.result_info = "lt_signed"}, tensor<4xi1> {jax.result_info = "gt_unsigned"},
                             tensor<2xi1> {jax.result_info = "gt_i1"}, tensor<3xi1> {jax.result_info = "le_f64"},
                             tensor<3xi1> {jax.result_info = "ne_i64"}) {
  %x = stablehlo.constant dense<[1.0, 0x7FC00000, 0x7FC00000, -0.0, 1.0, 2.0, 0xFF800000, 0x7F800000]> : tensor<8xf32>
  %y = stablehlo.constant dense<[1.0, 1.0, 0x7FC00000, 0.0, 2.0, 1.0, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %eq = stablehlo.compare  EQ, %x, %y,  FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %ne = stablehlo.compare  NE, %x, %y,  FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %lt = stablehlo.compare  LT, %x, %y,  FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %le = stablehlo.compare  LE, %x, %y,  FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %gt = stablehlo.compare  GT, %x, %y,  FLOAT : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %ge = stablehlo.compare  GE, %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  // totalOrder: NaN == NaN (same bits), -0 != +0, -0 < +0, x < NaN for every non-NaN x
  %teq = stablehlo.compare  EQ, %x, %y,  TOTALORDER : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %tlt = stablehlo.compare  LT, %x, %y,  TOTALORDER : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %tge = stablehlo.compare  GE, %x, %y,  TOTALORDER : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  // the chain -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN: each element LT the next one
  %c0 = stablehlo.constant dense<[0xFFC00000, 0xFF800000, -1.0, -0.0, 0.0, 0x7F800000]> : tensor<6xf32>
  %c1 = stablehlo.constant dense<[0xFF800000, -1.0, -0.0, 0.0, 1.0, 0x7FC00000]> : tensor<6xf32>
  %chain = stablehlo.compare  LT, %c0, %c1,  TOTALORDER : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
  // SIGNED: -1 < 1, INT32_MIN < INT32_MAX, 5 < 5 is false, 3 < -3 is false
  %s0 = stablehlo.constant dense<[-1, -2147483648, 5, 3]> : tensor<4xi32>
  %s1 = stablehlo.constant dense<[1, 2147483647, 5, -3]> : tensor<4xi32>
  %slt = stablehlo.compare  LT, %s0, %s1,  SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  // UNSIGNED: 200 > 100, 255 > 0, 0 > 255 is false, 128 > 127
  %u0 = stablehlo.constant dense<[200, 255, 0, 128]> : tensor<4xui8>
  %u1 = stablehlo.constant dense<[100, 0, 255, 127]> : tensor<4xui8>
  %ugt = stablehlo.compare  GT, %u0, %u1,  UNSIGNED : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  // i1, UNSIGNED: true > false, false > true is false
  %b0 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %b1 = stablehlo.constant dense<[false, true]> : tensor<2xi1>
  %bgt = stablehlo.compare  GT, %b0, %b1,  UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // f64 FLOAT: 0.1 <= 0.1, NaN <= NaN is false, -inf <= -1e308
  %d0 = stablehlo.constant dense<[0.1, 0x7FF8000000000000, 0xFFF0000000000000]> : tensor<3xf64>
  %d1 = stablehlo.constant dense<[0.1, 0x7FF8000000000000, -1.0e308]> : tensor<3xf64>
  %dle = stablehlo.compare  LE, %d0, %d1,  FLOAT : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xi1>
  // i64 SIGNED: values that differ only above bit 32 are not equal
  %l0 = stablehlo.constant dense<[4294967296, 7, -9223372036854775808]> : tensor<3xi64>
  %l1 = stablehlo.constant dense<[0, 7, 9223372036854775807]> : tensor<3xi64>
  %lne = stablehlo.compare  NE, %l0, %l1,  SIGNED : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  return %eq, %ne, %lt, %le, %gt, %ge, %teq, %tlt, %tge, %chain, %slt, %ugt, %bgt, %dle, %lne : tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<6xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2xi1>, tensor<3xi1>, tensor<3xi1>
}
