// expect: 5:122: error: unexpected '}', expected '>' to close '#stablehlo.gather<'
// stage: syntax
module @m {
  func.func @f(%t: tensor<8x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
    %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0]}> : (tensor<8x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}
