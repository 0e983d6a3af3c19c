// expect: 3:30: error: element type 'ui64' is not supported
// stage: import
func.func @main(%a: tensor<4xui64>) -> tensor<4xui64> {
  return %a : tensor<4xui64>
}
