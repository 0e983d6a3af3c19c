// expect: 6:5: error: unexpected 'return', expected ':' and the types of 'stablehlo.add'
// stage: syntax
module @m {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %a
    return %0 : tensor<4xf32>
  }
}
