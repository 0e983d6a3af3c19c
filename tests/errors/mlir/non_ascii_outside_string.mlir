// expect: 5:46: error: unexpected character '\xc3' (only ASCII is allowed outside comments and strings)
// stage: syntax
module @m {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %a : tensor<4xf32> é
    return %0 : tensor<4xf32>
  }
}
