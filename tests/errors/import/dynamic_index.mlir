// expect: 4:8: error: stablehlo.dynamic_slice: start index 0 ('i') is computed at run time
// stage: import
func.func @main(%x: tensor<4xf32>, %i: tensor<i32>) -> tensor<2xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
