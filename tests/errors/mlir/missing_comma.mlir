// expect: 5:27: error: unexpected '%b', expected ',' or ':' and the types of 'stablehlo.add'
// stage: syntax
module @m {
  func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
