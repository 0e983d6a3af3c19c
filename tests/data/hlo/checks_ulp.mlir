// The reference interpreter's closeness in ULPs (stablehlo-translate
// --interpret): custom_call @check.expect_close allows 3 ULPs, the check
// dialect's expect_close [min_ulp_difference, max_ulp_difference] (default
// [0, 1]); across zero the ULPs of both sides add; NaN is close to NaN.
// tests/e2e/import.sh runs this (exit 0) and checks_ulp_fail.mlir (exit 1).
func.func public @main() -> tensor<2xf64> {
  // 1, 1 + 2^-23, -2^-149 and NaN against 1 + 3 * 2^-23, 1, 2^-149 and NaN: 3, 1, 2 and 0 ULPs apart
  %a = stablehlo.constant dense<[1.0, 1.00000011920928955078125, 0x80000001, 0x7FC00000]> : tensor<4xf32>
  %b = stablehlo.constant dense<[1.00000035762786865234375, 1.0, 0x00000001, 0x7FC00000]> : tensor<4xf32>
  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
  check.expect_close %a, %b, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 0 : tensor<4xf32>, tensor<4xf32>
  %c = stablehlo.constant dense<[2.0, -0.0]> : tensor<2xf64>
  %d = stablehlo.constant dense<[2.0000000000000004, 0.0]> : tensor<2xf64>
  check.expect_close %c, %d, max_ulp_difference = 1 : tensor<2xf64>, tensor<2xf64>
  // far apart across zero: -2 and 2 are 32,768 f16 ULPs and 2^31 f32 ULPs apart, beyond i16 and i32
  %e = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf16>
  %f = stablehlo.constant dense<[2.0, 2.0]> : tensor<2xf16>
  check.expect_close %e, %f, max_ulp_difference = 32768 : tensor<2xf16>, tensor<2xf16>
  %g = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %k = stablehlo.constant dense<[2.0, 2.0]> : tensor<2xf32>
  check.expect_close %g, %k, max_ulp_difference = 2147483648 : tensor<2xf32>, tensor<2xf32>
  return %d : tensor<2xf64>
}
