// expect: 4:8: error: stablehlo.convolution: padding 9223372036854775807 is beyond 2^31; carve reads pads, strides, dilations and windows up to that
// stage: import
func.func @main(%a: tensor<1x4x1xf32>, %k: tensor<2x1x1xf32>) -> tensor<1x3x1xf32> {
  %1 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[9223372036854775807, 0]], lhs_dilate = [4611686018427387904], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>
  return %1 : tensor<1x3x1xf32>
}
