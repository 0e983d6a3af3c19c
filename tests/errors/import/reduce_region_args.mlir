// expect: 5:8: error: stablehlo.reduce: the reducer is not supported; carve reduces with add, maximum, minimum, and, or, or a region of 2 arguments applied elementwise
// stage: import
func.func @main(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
