// expect: 5:8: error: stablehlo.pad: interior padding 4611686018427387904 is beyond 2^31; carve reads pads, strides, dilations and windows up to that
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.pad %a, %z, low = [0], high = [0], interior = [4611686018427387904] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
