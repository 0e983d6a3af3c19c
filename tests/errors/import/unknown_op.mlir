// expect: 4:8: error: 'stablehlo.atan2' is not supported by carve import
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.atan2 %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
