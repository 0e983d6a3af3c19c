// expect: 4:29: error: dimension too large (the limit is 2^62)
// stage: syntax
module @m {
  func.func @f(%a: tensor<8x9223372036854775807xf32>) {
    return
  }
}
