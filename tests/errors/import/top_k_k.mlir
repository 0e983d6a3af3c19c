// expect: 4:10: error: chlo.top_k: k must be a number of elements of the last dim (0 to 6)
// stage: import
func.func @main(%w: tensor<2x6xf32>) -> tensor<2x7xf32> {
  %t:2 = chlo.top_k(%w, k = 7) : tensor<2x6xf32> -> (tensor<2x7xf32>, tensor<2x7xi32>)
  return %t#0 : tensor<2x7xf32>
}
