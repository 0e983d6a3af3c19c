// expect: 5:46: error: unexpected ')', expected ']' to close the list
// stage: syntax
module @m {
  func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
    %0 = stablehlo.transpose %a, dims = [1, 0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
}
