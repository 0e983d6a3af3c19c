// expect: 12:8: error: @g calls itself (directly or through others); carve inlines calls and cannot import recursion
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @g(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @h(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @h(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @g(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
