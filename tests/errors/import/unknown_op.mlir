// expect: 4:8: error: 'stablehlo.reduce_precision' is not supported by carve import
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
