// expect: 5:8: error: stablehlo.reduce_window: window_strides 9223372036854775807 is beyond 2^31; carve reads pads, strides, dilations and windows up to that
// stage: import
func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 9223372036854775807>, padding = dense<[[0, 0], [9223372036854775807, 9223372036854775807]]> : tensor<2x2xi64>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
