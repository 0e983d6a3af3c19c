// slice with strides, reverse and pad's interior elements: StableHLO spec.
// carve builds them from plain slices, reshapes and concatenations (a
// stride s splits a dim into [m, s] and keeps phase 0). The operand is
//   x = [[0, 1, 2, 3, 4, 5], [6, .., 11], [12, .., 17], [18, .., 23]].
func.func public @main() -> (tensor<2x3xi32> {jax.result_info = "every_other"}, tensor<1x2xi32> {jax.result_info = "stride_past_end"},
                             tensor<2x3xi32> {jax.result_info = "generic_strides"}, tensor<1x6xf32> {jax.result_info = "stride_one_row"},
                             tensor<4x6xi32> {jax.result_info = "reverse_cols"}, tensor<4x6xi32> {jax.result_info = "reverse_both"},
                             tensor<3x6xf32> {jax.result_info = "interior"}, tensor<2x5xf32> {jax.result_info = "interior_cut"},
                             tensor<0x2xi32> {jax.result_info = "strided_empty"}) {
  %x = stablehlo.iota dim = 0 : tensor<24xi32>
  %x2 = stablehlo.reshape %x : (tensor<24xi32>) -> tensor<4x6xi32>
  // rows 0, 2; columns 1, 3, 5 -> [[1, 3, 5], [13, 15, 17]]
  %s1 = stablehlo.slice %x2 [0:4:2, 1:6:2] : (tensor<4x6xi32>) -> tensor<2x3xi32>
  // row 1 only (the next would be 4); columns 0, 4 -> [[6, 10]]
  %s2 = stablehlo.slice %x2 [1:4:3, 0:6:4] : (tensor<4x6xi32>) -> tensor<1x2xi32>
  // the generic form: rows 0, 3; columns 0, 2, 4 of the first 5 -> [[0, 2, 4], [18, 20, 22]]
  %s3 = "stablehlo.slice"(%x2) <{limit_indices = array<i64: 4, 5>, start_indices = array<i64: 0, 0>, strides = array<i64: 3, 2>}> : (tensor<4x6xi32>) -> tensor<2x3xi32>
  // a stride longer than the range: one row, f32 -> [[12, .., 17]]
  %xf = stablehlo.convert %x2 : (tensor<4x6xi32>) -> tensor<4x6xf32>
  %s4 = stablehlo.slice %xf [2:3:5, 0:6] : (tensor<4x6xf32>) -> tensor<1x6xf32>
  %r1 = stablehlo.reverse %x2, dims = [1] : tensor<4x6xi32>
  %r2 = stablehlo.reverse %x2, dims = [0, 1] : tensor<4x6xi32>
  // [[1, 2, 3], [4, 5, 6]] with one v between neighbours on both dims, one v before each row -> 3x6
  %y = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %v = stablehlo.constant dense<-0.5> : tensor<f32>
  %p1 = stablehlo.pad %y, %v, low = [0, 1], high = [0, 0], interior = [1, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x6xf32>
  // two v between columns (1 v v 2 v v 3), then one cut from each end -> [[v, v, 2, v, v], [v, v, 5, v, v]]
  %p2 = stablehlo.pad %y, %v, low = [0, -1], high = [0, -1], interior = [0, 2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x5xf32>
  // an empty range with a stride
  %s5 = stablehlo.slice %x2 [3:3:2, 0:6:3] : (tensor<4x6xi32>) -> tensor<0x2xi32>
  return %s1, %s2, %s3, %s4, %r1, %r2, %p1, %p2, %s5 : tensor<2x3xi32>, tensor<1x2xi32>, tensor<2x3xi32>, tensor<1x6xf32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<3x6xf32>, tensor<2x5xf32>, tensor<0x2xi32>
}
