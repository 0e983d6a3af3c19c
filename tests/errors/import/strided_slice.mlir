// expect: 4:8: error: stablehlo.slice: strides other than 1 are not supported (dim 0 has 2)
// stage: import
func.func @main(%a: tensor<8xf32>) -> tensor<4xf32> {
  %0 = stablehlo.slice %a [0:8:2] : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
