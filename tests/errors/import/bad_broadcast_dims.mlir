// expect: 4:8: error: stablehlo.broadcast_in_dim: 2 dims for an operand of rank 1
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
