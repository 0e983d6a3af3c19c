// expect: 5:8: error: stablehlo.reduce_window: strides and dilations must be at least 1 (window dim 1)
// stage: import
func.func @main(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %zero) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
