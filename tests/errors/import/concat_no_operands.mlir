// expect: 4:8: error: stablehlo.concatenate needs at least one operand
// stage: import
func.func @main(%a: tensor<2xf32>) -> tensor<0xf32> {
  %0 = "stablehlo.concatenate"() {dimension = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}
