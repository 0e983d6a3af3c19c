// gather of single points along some dims (jnp.take_along_axis, optax's
// cross-entropy with integer labels, x[i, j] lookups) and of whole slices
// at points along a middle dim: StableHLO spec semantics (start indices
// clamped into range), against a direct Python evaluation of the spec's
// index formula. carve builds them as a one-hot mask, select and a sum;
// and a window of 2 rows at a start clamped so that it fits (any gather:
// a one-hot of each result element's place in the operand).
func.func public @main() -> (tensor<3x1xf32> {jax.result_info = "take_along_axis"}, tensor<3x1xf32> {jax.result_info = "clamped"}, tensor<2x2x4xf32> {jax.result_info = "along_middle_batched"}, tensor<3xf32> {jax.result_info = "points_2d"}, tensor<3x6x5xf32> {jax.result_info = "rows_along_middle"}, tensor<2x3x3xi32> {jax.result_info = "ints_implicit_vector"}, tensor<3x2x4xf32> {jax.result_info = "window_clamped"}) {
  %take_along_axis_x = stablehlo.constant dense<[[-2.0, 5.0, 1.0, -3.0, 4.0], [0.0, -4.0, 3.0, -1.0, -5.0], [2.0, -2.0, 5.0, 1.0, -3.0]]> : tensor<3x5xf32>
  %take_along_axis_i = stablehlo.constant dense<[[[2]], [[0]], [[4]]]> : tensor<3x1x1xi32>
  %take_along_axis = "stablehlo.gather"(%take_along_axis_x, %take_along_axis_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<3x5xf32>, tensor<3x1x1xi32>) -> tensor<3x1xf32>
  %clamped_x = stablehlo.constant dense<[[-2.0, 5.0, 1.0, -3.0, 4.0], [0.0, -4.0, 3.0, -1.0, -5.0], [2.0, -2.0, 5.0, 1.0, -3.0]]> : tensor<3x5xf32>
  %clamped_i = stablehlo.constant dense<[[[7]], [[-2]], [[3]]]> : tensor<3x1x1xi32>
  %clamped = "stablehlo.gather"(%clamped_x, %clamped_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<3x5xf32>, tensor<3x1x1xi32>) -> tensor<3x1xf32>
  %along_middle_batched_x = stablehlo.constant dense<[[[-5.0, 0.0, 5.0, -3.0], [2.0, -6.0, -1.0, 4.0], [-4.0, 1.0, 6.0, -2.0]], [[3.0, -5.0, 0.0, 5.0], [-3.0, 2.0, -6.0, -1.0], [4.0, -4.0, 1.0, 6.0]]]> : tensor<2x3x4xf32>
  %along_middle_batched_i = stablehlo.constant dense<[[[1, 1, 1, 1], [1, 1, 1, 1]], [[1, 1, 1, 1], [1, 1, 1, 1]]]> : tensor<2x2x4xi32>
  %along_middle_batched = "stablehlo.gather"(%along_middle_batched_x, %along_middle_batched_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [1], operand_batching_dims = [0, 2], start_indices_batching_dims = [0, 2], start_index_map = [1], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>, tensor<2x2x4xi32>) -> tensor<2x2x4xf32>
  %points_2d_x = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0], [15.0, 16.0, 17.0, 18.0, 19.0]]> : tensor<4x5xf32>
  %points_2d_i = stablehlo.constant dense<[[0, 4], [3, 1], [2, 2]]> : tensor<3x2xi32>
  %points_2d = "stablehlo.gather"(%points_2d_x, %points_2d_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0, 1], operand_batching_dims = [], start_indices_batching_dims = [], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x5xf32>, tensor<3x2xi32>) -> tensor<3xf32>
  %rows_along_middle_x = stablehlo.constant dense<[[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0], [15.0, 16.0, 17.0, 18.0, 19.0]], [[20.0, 21.0, 22.0, 23.0, 24.0], [25.0, 26.0, 27.0, 28.0, 29.0], [30.0, 31.0, 32.0, 33.0, 34.0], [35.0, 36.0, 37.0, 38.0, 39.0]], [[40.0, 41.0, 42.0, 43.0, 44.0], [45.0, 46.0, 47.0, 48.0, 49.0], [50.0, 51.0, 52.0, 53.0, 54.0], [55.0, 56.0, 57.0, 58.0, 59.0]]]> : tensor<3x4x5xf32>
  %rows_along_middle_i = stablehlo.constant dense<[3, 0, 2, 2, 1, 3]> : tensor<6xi32>
  %rows_along_middle = "stablehlo.gather"(%rows_along_middle_x, %rows_along_middle_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 2], collapsed_slice_dims = [1], operand_batching_dims = [], start_indices_batching_dims = [], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 3, 1, 5>}> : (tensor<3x4x5xf32>, tensor<6xi32>) -> tensor<3x6x5xf32>
  %ints_implicit_vector_x = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]> : tensor<4x3xi32>
  %ints_implicit_vector_i = stablehlo.constant dense<[[1, 0, 3], [2, 2, 3]]> : tensor<2x3xi32>
  %ints_implicit_vector = "stablehlo.gather"(%ints_implicit_vector_x, %ints_implicit_vector_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], operand_batching_dims = [], start_indices_batching_dims = [], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xi32>, tensor<2x3xi32>) -> tensor<2x3x3xi32>
  %window_clamped_x = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0]]> : tensor<5x4xf32>
  %window_clamped_i = stablehlo.constant dense<[[0], [4], [2]]> : tensor<3x1xi32>
  %window_clamped = "stablehlo.gather"(%window_clamped_x, %window_clamped_i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [], operand_batching_dims = [], start_indices_batching_dims = [], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 4>}> : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x2x4xf32>
  return %take_along_axis, %clamped, %along_middle_batched, %points_2d, %rows_along_middle, %ints_implicit_vector, %window_clamped : tensor<3x1xf32>, tensor<3x1xf32>, tensor<2x2x4xf32>, tensor<3xf32>, tensor<3x6x5xf32>, tensor<2x3x3xi32>, tensor<3x2x4xf32>
}
