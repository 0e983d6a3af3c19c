// expect: 8:1: error: unexpected end of input, expected '}' to close module @m
// stage: syntax
module @m {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
