// scan.mlir's function written out: three layers, then their outputs stacked.
func.func public @main(%arg0: tensor<3x4x4xf32>, %arg1: tensor<2x4xf32>) -> (tensor<2x4xf32> {jax.result_info = "carry"}, tensor<3x2x4xf32> {jax.result_info = "ys"}) {
  %w0 = stablehlo.slice %arg0 [0:1, 0:4, 0:4] : (tensor<3x4x4xf32>) -> tensor<1x4x4xf32>
  %w1 = stablehlo.slice %arg0 [1:2, 0:4, 0:4] : (tensor<3x4x4xf32>) -> tensor<1x4x4xf32>
  %w2 = stablehlo.slice %arg0 [2:3, 0:4, 0:4] : (tensor<3x4x4xf32>) -> tensor<1x4x4xf32>
  %v0 = stablehlo.reshape %w0 : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
  %v1 = stablehlo.reshape %w1 : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
  %v2 = stablehlo.reshape %w2 : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
  %d0 = stablehlo.dot_general %arg1, %v0, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %h0 = stablehlo.tanh %d0 : tensor<2x4xf32>
  %d1 = stablehlo.dot_general %h0, %v1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %h1 = stablehlo.tanh %d1 : tensor<2x4xf32>
  %d2 = stablehlo.dot_general %h1, %v2, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %h2 = stablehlo.tanh %d2 : tensor<2x4xf32>
  %y0 = stablehlo.reshape %h0 : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
  %y1 = stablehlo.reshape %h1 : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
  %y2 = stablehlo.reshape %h2 : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
  %ys = stablehlo.concatenate %y0, %y1, %y2, dim = 0 : (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<3x2x4xf32>
  return %h2, %ys : tensor<2x4xf32>, tensor<3x2x4xf32>
}
