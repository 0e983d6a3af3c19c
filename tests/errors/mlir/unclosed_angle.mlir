// expect: 5:34: error: unexpected ')', expected '>' to close 'tensor<'
// stage: syntax
// the argument's type lacks its '>'
module @m {
  func.func @f(%a: tensor<4x8xf32) -> tensor<4x8xf32> {
    return %a : tensor<4x8xf32>
  }
}
