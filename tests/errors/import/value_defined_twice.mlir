// expect: 5:3: error: %0 is defined twice; each value takes one name
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %a : tensor<f32>
  %0 = stablehlo.multiply %a, %a : tensor<f32>
  return %0 : tensor<f32>
}
