// expect: 5:28: error: unexpected character '$'
// stage: syntax
module @m {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, $a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
