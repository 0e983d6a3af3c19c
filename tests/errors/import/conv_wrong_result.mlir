// expect: 4:8: error: stablehlo.convolution: the result is f32[1, 3, 3, 6] but the program declares f32[1, 5, 5, 6]
// stage: import
func.func @main(%x: tensor<1x5x5x4xf32>, %k: tensor<3x3x4x6xf32>) -> tensor<1x5x5x6xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x4xf32>, tensor<3x3x4x6xf32>) -> tensor<1x5x5x6xf32>
  return %0 : tensor<1x5x5x6xf32>
}
