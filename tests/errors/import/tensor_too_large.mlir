// expect: 3:21: error: 'tensor<4294967296x4294967296xf32>' has more than 2^62 elements; carve's tensors stop there
// stage: import
func.func @main(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  return %a : tensor<4294967296x4294967296xf32>
}
