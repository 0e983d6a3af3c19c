// expect: 5:35: error: number too large (integers must fit in 64 bits)
// stage: syntax
module @m {
  func.func @f() -> tensor<i64> {
    %0 = stablehlo.constant dense<18446744073709551616> : tensor<i64>
    return %0 : tensor<i64>
  }
}
