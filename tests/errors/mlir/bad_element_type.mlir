// expect: 4:29: error: unexpected 'q7', expected an element type such as f32
// stage: syntax
module @m {
  func.func @f(%a: tensor<3xq7>) {
    return
  }
}
