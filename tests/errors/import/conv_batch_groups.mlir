// expect: 4:8: error: stablehlo.convolution: batch_group_count 2 is not supported (it appears in the gradients of convolutions
// stage: import
func.func @main(%x: tensor<4x5x5x2xf32>, %k: tensor<3x3x2x4xf32>) -> tensor<2x3x3x4xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<4x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x3x3x4xf32>
  return %0 : tensor<2x3x3x4xf32>
}
