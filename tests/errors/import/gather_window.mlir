// expect: 4:8: error: stablehlo.gather: carve gathers whole rows of a table (an embedding) or single points along some dims
// stage: import
func.func @main(%x: tensor<8x6xf32>, %i: tensor<3x1xi32>) -> tensor<3x2x6xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 6>}> : (tensor<8x6xf32>, tensor<3x1xi32>) -> tensor<3x2x6xf32>
  return %0 : tensor<3x2x6xf32>
}
