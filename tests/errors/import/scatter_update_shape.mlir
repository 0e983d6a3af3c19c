// expect: 4:8: error: scatter: dim 0 of the updates (5) must match dim 0 of the indices (4)
// stage: import
func.func @main(%x: tensor<8x2xf32>, %i: tensor<4x1xi32>, %u: tensor<5x2xf32>) -> tensor<8x2xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x2xf32>, tensor<4x1xi32>, tensor<5x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}
