// expect: 4:8: error: custom_call @mosaic_gpu is not supported; carve reads @Sharding (passed through)
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @mosaic_gpu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
