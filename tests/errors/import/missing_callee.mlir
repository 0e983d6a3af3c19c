// expect: 4:8: error: call: no function @helper in this module
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
