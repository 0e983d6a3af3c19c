// expect: 4:8: error: stablehlo.clamp: min is [3]; it must be a scalar or the operand's shape [4]
// stage: import
func.func @main(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %0 = stablehlo.clamp %b, %a, %b : (tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
