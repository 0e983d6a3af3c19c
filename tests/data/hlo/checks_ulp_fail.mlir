// checks_ulp.mlir's values 4 ULPs apart (1 and 1 + 4 * 2^-23): the custom
// call's 3 ULPs pass no more, so carve run must exit 1 naming it.
func.func public @main() -> tensor<2xf32> {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[1.000000476837158203125, 2.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %a : tensor<2xf32>
}
