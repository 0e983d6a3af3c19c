// dynamic_slice and dynamic_update_slice at indices computed at run time
// (a KV cache written at a position, lax.dynamic_slice in a loop body
// carve cannot unroll): the starts are clamped into range as the spec
// says; carve reads and writes through a one-hot of the places, which
// keeps every bit (-0.0 and NaN come back as they are). The indices are
// computed from floats, so carve cannot know them when it reads the file.
// The operand is [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, -0.0]].
func.func public @main() -> (tensor<2x2xf32> {jax.result_info = "slice"}, tensor<2x3xf32> {jax.result_info = "slice_clamped"},
                             tensor<3x4xf32> {jax.result_info = "update"}, tensor<3x4xf32> {jax.result_info = "update_clamped"}) {
  %x = stablehlo.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, -0.0]]> : tensor<3x4xf32>
  %f1 = stablehlo.constant dense<1.0> : tensor<f32>
  %f2 = stablehlo.constant dense<2.0> : tensor<f32>
  %fm = stablehlo.constant dense<-5.0> : tensor<f32>
  %f9 = stablehlo.constant dense<9.0> : tensor<f32>
  %i1 = stablehlo.convert %f1 : (tensor<f32>) -> tensor<i32>
  %i2 = stablehlo.convert %f2 : (tensor<f32>) -> tensor<i32>
  %im = stablehlo.convert %fm : (tensor<f32>) -> tensor<i32>
  %i9 = stablehlo.convert %f9 : (tensor<f32>) -> tensor<i64>
  %j9 = stablehlo.convert %f9 : (tensor<f32>) -> tensor<i32>
  // rows 1-2, columns 2-3 -> [[6, 7], [10, -0]]
  %s1 = stablehlo.dynamic_slice %x, %i1, %i2, sizes = [2, 2] : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  // start (9, -5) clamped to (1, 0) -> [[4, 5, 6], [8, 9, 10]]
  %s2 = stablehlo.dynamic_slice %x, %j9, %im, sizes = [2, 3] : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %u = stablehlo.constant dense<[[-1.0, -2.0]]> : tensor<1x2xf32>
  // [[-1, -2]] at (2, 1) -> row 2 = [8, -1, -2, -0]
  %d1 = stablehlo.dynamic_update_slice %x, %u, %i2, %i1 : (tensor<3x4xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  // at (9, 9) (i64) clamped to (2, 2) -> row 2 = [8, 9, -1, -2]
  %d2 = stablehlo.dynamic_update_slice %x, %u, %i9, %i9 : (tensor<3x4xf32>, tensor<1x2xf32>, tensor<i64>, tensor<i64>) -> tensor<3x4xf32>
  return %s1, %s2, %d1, %d2 : tensor<2x2xf32>, tensor<2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
