// scatter with any region and dimension numbers (x.at[i].add/set/min/mul,
// lax.scatter): StableHLO spec semantics, updates outside the operand
// skipped, updates applied in their order (the last write wins for set),
// against a direct Python evaluation of the spec's index formula.
func.func public @main() -> (tensor<3x4xf32> {jax.result_info = "add_rows_repeated_oob"}, tensor<3x4xf32> {jax.result_info = "set_points"}, tensor<4x3xf32> {jax.result_info = "min_window"}, tensor<2x5xf32> {jax.result_info = "mul_batched"}, tensor<5xf32> {jax.result_info = "max_implicit"}) {
  %add_rows_repeated_oob_x = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %add_rows_repeated_oob_i = stablehlo.constant dense<[[1], [0], [1], [5]]> : tensor<4x1xi32>
  %add_rows_repeated_oob_u = stablehlo.constant dense<[[-2.0, -1.0, 0.0, 1.0], [2.0, -2.0, -1.0, 0.0], [1.0, 2.0, -2.0, -1.0], [0.0, 1.0, 2.0, -2.0]]> : tensor<4x4xf32>
  %add_rows_repeated_oob = "stablehlo.scatter"(%add_rows_repeated_oob_x, %add_rows_repeated_oob_i, %add_rows_repeated_oob_u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], input_batching_dims = [], scatter_indices_batching_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<4x1xi32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  %set_points_x = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %set_points_i = stablehlo.constant dense<[[0, 1], [2, 3], [0, 1]]> : tensor<3x2xi32>
  %set_points_u = stablehlo.constant dense<[100.0, 200.0, 300.0]> : tensor<3xf32>
  %set_points = "stablehlo.scatter"(%set_points_x, %set_points_i, %set_points_u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0, 1], input_batching_dims = [], scatter_indices_batching_dims = [], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<3x4xf32>, tensor<3x2xi32>, tensor<3xf32>) -> tensor<3x4xf32>
  %min_window_x = stablehlo.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]> : tensor<4x3xf32>
  %min_window_i = stablehlo.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %min_window_u = stablehlo.constant dense<[[[-1.0, 5.0, 2.0], [9.0, -3.0, 4.0]], [[0.0, 0.0, -7.0], [1.0, 1.0, 1.0]]]> : tensor<2x2x3xf32>
  %min_window = "stablehlo.scatter"(%min_window_x, %min_window_i, %min_window_u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [], input_batching_dims = [], scatter_indices_batching_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.minimum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x2x3xf32>) -> tensor<4x3xf32>
  %mul_batched_x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]]> : tensor<2x5xf32>
  %mul_batched_i = stablehlo.constant dense<[[3], [0]]> : tensor<2x1xi32>
  %mul_batched_u = stablehlo.constant dense<[2.0, -0.5]> : tensor<2xf32>
  %mul_batched = "stablehlo.scatter"(%mul_batched_x, %mul_batched_i, %mul_batched_u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<2x5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<2x5xf32>
  %max_implicit_x = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0]> : tensor<5xf32>
  %max_implicit_i = stablehlo.constant dense<[4, 0, 4]> : tensor<3xi32>
  %max_implicit_u = stablehlo.constant dense<[2.5, -1.0, 7.0]> : tensor<3xf32>
  %max_implicit = "stablehlo.scatter"(%max_implicit_x, %max_implicit_i, %max_implicit_u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], input_batching_dims = [], scatter_indices_batching_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<5xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<5xf32>
  return %add_rows_repeated_oob, %set_points, %min_window, %mul_batched, %max_implicit : tensor<3x4xf32>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<2x5xf32>, tensor<5xf32>
}
