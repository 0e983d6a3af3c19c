// dynamic_slice, dynamic_update_slice: StableHLO spec: the start indices are
// clamped to [0, dim - size] before use ("adjusted_start_indices"), so a
// slice or update never reads or writes outside the operand. carve reads
// them when the indices are known as it imports (constants here; a while
// loop's counter when it unrolls one). The operand is
//   [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]].
func.func public @main() -> (tensor<2x2xi32> {jax.result_info = "slice_clamped"}, tensor<1x3xi32> {jax.result_info = "slice_negative"},
                             tensor<3x4xi32> {jax.result_info = "update_middle"}, tensor<3x4xi32> {jax.result_info = "update_clamped"},
                             tensor<3x4xf32> {jax.result_info = "update_whole_rows"}) {
  %x = stablehlo.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %cm1 = stablehlo.constant dense<-1> : tensor<i32>
  %c5 = stablehlo.constant dense<5> : tensor<i32>
  %cm3 = stablehlo.constant dense<-3> : tensor<i32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  // start (1, 3), sizes [2, 2]: the column start is clamped to 4 - 2 = 2 -> [[6, 7], [10, 11]]
  %s1 = stablehlo.dynamic_slice %x, %c1, %c3, sizes = [2, 2] : (tensor<3x4xi32>, tensor<i32>, tensor<i32>) -> tensor<2x2xi32>
  // start (-1, 1), sizes [1, 3]: the row start is clamped to 0 -> [[1, 2, 3]]
  %s2 = stablehlo.dynamic_slice %x, %cm1, %c1, sizes = [1, 3] : (tensor<3x4xi32>, tensor<i32>, tensor<i32>) -> tensor<1x3xi32>
  // a 2x2 block at (1, 1): both dims differ -> [[0, 1, 2, 3], [4, -1, -2, 7], [8, -3, -4, 11]]
  %u = stablehlo.constant dense<[[-1, -2], [-3, -4]]> : tensor<2x2xi32>
  %u1 = stablehlo.dynamic_update_slice %x, %u, %c1, %c1 : (tensor<3x4xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<3x4xi32>
  // at (5, -3), clamped to (1, 0) -> [[0, 1, 2, 3], [-1, -2, 6, 7], [-3, -4, 10, 11]]
  %u2 = stablehlo.dynamic_update_slice %x, %u, %c5, %cm3 : (tensor<3x4xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<3x4xi32>
  // one whole row (f32) at row 2 -> the last row replaced
  %xf = stablehlo.convert %x : (tensor<3x4xi32>) -> tensor<3x4xf32>
  %r = stablehlo.constant dense<[[0.5, -0.0, 1.5, 2.5]]> : tensor<1x4xf32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %u3 = stablehlo.dynamic_update_slice %xf, %r, %c2, %c0 : (tensor<3x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  return %s1, %s2, %u1, %u2, %u3 : tensor<2x2xi32>, tensor<1x3xi32>, tensor<3x4xi32>, tensor<3x4xi32>, tensor<3x4xf32>
}
