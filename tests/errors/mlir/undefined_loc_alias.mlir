// expect: 5:50: error: undefined location alias '#loc9'
// stage: syntax
module @m {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %a : tensor<4xf32> loc(#loc9)
    return %0 : tensor<4xf32> loc(#loc1)
  }
}
#loc1 = loc("model.py":3:1)
