// expect: 4:8: error: 'stablehlo.cholesky' is not supported by carve import
// stage: import
func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
