// expect: 4:8: error: stablehlo.add: the result is f32[4] but the program declares f32[8]
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
