// expect: 4:8: error: gather: collapsed_slice_dims entry 5 is out of range for the operand (use 0..1)
// stage: import
func.func @main(%x: tensor<8x2xf32>, %i: tensor<4x1xi32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [5], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2>}> : (tensor<8x2xf32>, tensor<4x1xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
