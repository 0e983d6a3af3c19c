// expect: 3:30: error: element type 'ui32' is not supported
// stage: import
func.func @main(%a: tensor<4xui32>) -> tensor<4xui32> {
  return %a : tensor<4xui32>
}
