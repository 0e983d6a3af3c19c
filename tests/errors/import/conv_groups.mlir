// expect: 4:8: error: stablehlo.convolution: 4 input features in 3 groups do not match the kernel's 2 inputs and 6 outputs
// stage: import
func.func @main(%x: tensor<1x5x5x4xf32>, %k: tensor<3x3x2x6xf32>) -> tensor<1x3x3x6xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x5x5x4xf32>, tensor<3x3x2x6xf32>) -> tensor<1x3x3x6xf32>
  return %0 : tensor<1x3x3x6xf32>
}
