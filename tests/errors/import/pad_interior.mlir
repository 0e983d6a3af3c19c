// expect: 5:8: error: stablehlo.pad: interior padding (1 in dim 0) is not supported
// stage: import
func.func @main(%x: tensor<3xf32>) -> tensor<5xf32> {
  %v = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %x, %v, low = [0], high = [0], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
