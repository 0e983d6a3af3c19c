// expect: 5:8: error: stablehlo.if: the result is f32[2] but the program declares f32[3]
// stage: import
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %0 = "stablehlo.if"(%t) ({
    stablehlo.return %x : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
