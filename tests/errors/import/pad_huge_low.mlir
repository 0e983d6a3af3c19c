// expect: 5:8: error: stablehlo.pad: low padding 9223372036854775807 is beyond 2^31; carve reads pads, strides, dilations and windows up to that
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.pad %a, %z, low = [9223372036854775807], high = [-9223372036854775807], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
