// expect: 6:11: error: @main is defined twice in this module; give each function its own name
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %a : tensor<f32>
  return %0 : tensor<f32>
}
