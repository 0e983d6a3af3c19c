// expect: 4:8: error: @main calls itself (directly or through others); carve inlines calls and cannot import recursion
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @main(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
