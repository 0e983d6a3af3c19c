// expect: 4:8: error: stablehlo.reduce_precision: format 'f5m10' is not eNmM (e5m10, e8m7)
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.reduce_precision %a, format = f5m10 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
