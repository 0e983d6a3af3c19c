// expect: 4:8: error: 'stablehlo.cosine' is not supported by carve import
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.cosine %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
