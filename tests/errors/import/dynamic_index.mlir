// expect: 4:8: error: stablehlo.dynamic_slice: start index 0 ('i') must be an integer scalar
// stage: import
func.func @main(%x: tensor<4xf32>, %i: tensor<f32>) -> tensor<2xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<4xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
