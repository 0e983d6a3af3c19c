// expect: 6:8: error: stablehlo.select_and_scatter: the source is [2, 2]; the windows of the operand make 3 along dim 0
// stage: import
func.func @main(%x: tensor<4x4xf32>, %s: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  // windows 2x2 with stride 1 make 3x3 results, not 2x2
  %0 = "stablehlo.select_and_scatter"(%x, %s, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  GE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
