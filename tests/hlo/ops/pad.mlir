// pad: StableHLO spec: the operand with edge_padding_low/high elements of
// the padding value before and after each dim (a negative edge removes
// elements), and interior_padding between elements (strided.mlir has those).
// The operand is [[1, 2, 3], [4, 5, 6]].
func.func public @main() -> (tensor<4x4xf32> {jax.result_info = "grow"}, tensor<2x1xf32> {jax.result_info = "cut"},
                             tensor<3x3xi32> {jax.result_info = "mixed_i32"}, tensor<2x3xf32> {jax.result_info = "none"}) {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %v = stablehlo.constant dense<-0.5> : tensor<f32>
  // one row before, one after; one column before, none after ->
  // [[v, v, v, v], [v, 1, 2, 3], [v, 4, 5, 6], [v, v, v, v]]
  %p1 = stablehlo.pad %x, %v, low = [1, 1], high = [1, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x4xf32>
  // negative edges cut: the first column and the last one -> [[2], [5]]
  %p2 = stablehlo.pad %x, %v, low = [0, -1], high = [0, -1], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x1xf32>
  // i32, a cut and a block on the same dim: [[1, 2, 3], [4, 5, 6]] -> rows 1.. plus two rows of 9 -> [[4, 5, 6], [9, 9, 9], [9, 9, 9]]
  %xi = stablehlo.convert %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %nine = stablehlo.constant dense<9> : tensor<i32>
  %p3 = stablehlo.pad %xi, %nine, low = [-1, 0], high = [2, 0], interior = [0, 0] : (tensor<2x3xi32>, tensor<i32>) -> tensor<3x3xi32>
  // no padding: the operand itself
  %p4 = stablehlo.pad %x, %v, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %p1, %p2, %p3, %p4 : tensor<4x4xf32>, tensor<2x1xf32>, tensor<3x3xi32>, tensor<2x3xf32>
}
