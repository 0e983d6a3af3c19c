// expect: 5:35: error: hexadecimal number too large (at most 64 bits, 16 digits)
// stage: syntax
module @m {
  func.func @f() -> tensor<f64> {
    %0 = stablehlo.constant dense<0x1FFF0000000000000> : tensor<f64>
    return %0 : tensor<f64>
  }
}
