// gather (the embedding form: whole rows of a table by index) and scatter
// with an add body (whole rows added into a table, an embedding's
// gradient): StableHLO spec "gather" and "scatter". Repeated indices in a
// scatter-add each add their update (the order of the additions is left to
// the implementation; these sums are exact in any order).
func.func public @main() -> (tensor<4x2xf32> {jax.result_info = "gather_rows"}, tensor<2x2x2xf32> {jax.result_info = "gather_2d_ids"},
                             tensor<3x2xf32> {jax.result_info = "scatter_add"}) {
  // table row r = [10 r, 10 r + 1]
  %t = stablehlo.constant dense<[[0.0, 1.0], [10.0, 11.0], [20.0, 21.0]]> : tensor<3x2xf32>
  // ids [2, 0, 2, 1] -> rows 2, 0, 2, 1
  %ids = stablehlo.constant dense<[[2], [0], [2], [1]]> : tensor<4x1xi32>
  %g = "stablehlo.gather"(%t, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<3x2xf32>, tensor<4x1xi32>) -> tensor<4x2xf32>
  // ids of shape 2x2 (i64) -> rows [[1, 2], [0, 0]]
  %ids2 = stablehlo.constant dense<[[1, 2], [0, 0]]> : tensor<2x2xi64>
  %g2 = "stablehlo.gather"(%t, %ids2) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2>}> : (tensor<3x2xf32>, tensor<2x2xi64>) -> tensor<2x2x2xf32>
  // scatter-add of updates [[1, 2], [3, 4], [5, 6]] at rows [0, 2, 0] into the table:
  // row 0: [0 + 1 + 5, 1 + 2 + 6] = [6, 9]; row 1 unchanged [10, 11]; row 2: [23, 25]
  %sid = stablehlo.constant dense<[[0], [2], [0]]> : tensor<3x1xi32>
  %up = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %s = "stablehlo.scatter"(%t, %sid, %up) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<3x2xf32>, tensor<3x1xi32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %g, %g2, %s : tensor<4x2xf32>, tensor<2x2x2xf32>, tensor<3x2xf32>
}
