// expect: 5:35: error: unexpected 'zero' in dense<...>, expected numbers, true or false, lists of them, or a hex string such as "0x0000803F"
// stage: syntax
module @m {
  func.func @f() -> tensor<f32> {
    %0 = stablehlo.constant dense<zero> : tensor<f32>
    return %0 : tensor<f32>
  }
}
