// expect: 4:8: error: stablehlo.gather: a gather of 24576 elements from 8192 is too large for carve's one-hot gather
// stage: import
func.func @main(%x: tensor<4096x2xf32>, %i: tensor<4096x1xi32>) -> tensor<4096x3x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 3, 2>}> : (tensor<4096x2xf32>, tensor<4096x1xi32>) -> tensor<4096x3x2xf32>
  return %0 : tensor<4096x3x2xf32>
}
