// expect: 4:8: error: stablehlo.convolution: the window has more than 4096 positions; carve builds windowed ops tap by tap
// stage: import
func.func @main(%x: tensor<1x100x100x1xf32>, %k: tensor<100x100x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x100x100x1xf32>, tensor<100x100x1x1xf32>) -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}
