// expect: 5:1: error: unexpected end of input
// stage: syntax
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
