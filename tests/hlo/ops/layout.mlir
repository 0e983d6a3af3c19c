// constant, broadcast_in_dim, reshape, transpose, slice, concatenate, iota:
// StableHLO spec sections of the same names; every value below follows from
// the definitions by hand (row-major order, as --print-outputs prints).
func.func public @main() -> (tensor<2x2xf32> {jax.result_info = "constant_nested"}, tensor<3xf32> {jax.result_info = "constant_hex"},
                             tensor<2x3xi32> {jax.result_info = "bcast_scalar"}, tensor<2x3xi32> {jax.result_info = "bcast_row"},
                             tensor<2x3xi32> {jax.result_info = "bcast_col"}, tensor<3x2x2xi32> {jax.result_info = "bcast_perm"},
                             tensor<3x2xi32> {jax.result_info = "reshape"}, tensor<3x2xi32> {jax.result_info = "transpose"},
                             tensor<2x2x3xi32> {jax.result_info = "transpose3"}, tensor<1x2xi32> {jax.result_info = "slice"},
                             tensor<2x4xi32> {jax.result_info = "concat1"}, tensor<3x3xi32> {jax.result_info = "concat0"},
                             tensor<2x3xi32> {jax.result_info = "iota0"}, tensor<2x3xf32> {jax.result_info = "iota1"},
                             tensor<4xi64> {jax.result_info = "iota_i64"}, tensor<2xui8> {jax.result_info = "constant_ui8"},
                             tensor<3xi1> {jax.result_info = "constant_i1"}) {
  %c = stablehlo.constant dense<[[1.5, -2.0], [3.25, 0.0]]> : tensor<2x2xf32>
  // hex literals are the bits: 0x7F800000 = inf, 0x80000000 = -0, 0x3F800000 = 1
  %h = stablehlo.constant dense<[0x7F800000, 0x80000000, 0x3F800000]> : tensor<3xf32>
  // a scalar to 2x3: every element 7
  %s = stablehlo.constant dense<7> : tensor<i32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
  // [1, 2, 3] along dim 1: each row is [1, 2, 3]; [1, 2] along dim 0: row i is all v[i]
  %r = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %br = stablehlo.broadcast_in_dim %r, dims = [1] : (tensor<3xi32>) -> tensor<2x3xi32>
  %v = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %bc = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<2xi32>) -> tensor<2x3xi32>
  // m = [[1, 2], [3, 4]] with dims = [2, 1]: result[k, i, j] = m[j, i], i.e. m transposed, repeated 3 times
  %m = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %bp = stablehlo.broadcast_in_dim %m, dims = [2, 1] : (tensor<2x2xi32>) -> tensor<3x2x2xi32>
  // a = [[0, 1, 2], [3, 4, 5]]: reshape keeps row-major order -> [[0, 1], [2, 3], [4, 5]];
  // transpose -> [[0, 3], [1, 4], [2, 5]]
  %a = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %rs = stablehlo.reshape %a : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %tr = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>
  // t[i, j, k] = 100 i + 10 j + k of shape 2x3x2, dims = [2, 0, 1]: result[k, i, j] = t[i, j, k]
  %t = stablehlo.constant dense<[[[0, 1], [10, 11], [20, 21]], [[100, 101], [110, 111], [120, 121]]]> : tensor<2x3x2xi32>
  %t3 = stablehlo.transpose %t, dims = [2, 0, 1] : (tensor<2x3x2xi32>) -> tensor<2x2x3xi32>
  // a[1:2, 1:3] = [[4, 5]]
  %sl = stablehlo.slice %a [1:2, 1:3] : (tensor<2x3xi32>) -> tensor<1x2xi32>
  // along dim 1: [[0, 1, 2, 7], [3, 4, 5, 8]]; along dim 0: a then [[9, 9, 9]]
  %col = stablehlo.constant dense<[[7], [8]]> : tensor<2x1xi32>
  %c1 = stablehlo.concatenate %a, %col, dim = 1 : (tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2x4xi32>
  %row = stablehlo.constant dense<9> : tensor<1x3xi32>
  %c0 = stablehlo.concatenate %a, %row, dim = 0 : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<3x3xi32>
  // iota along dim 0: [[0, 0, 0], [1, 1, 1]]; along dim 1 in f32: [[0, 1, 2], [0, 1, 2]]
  %i0 = stablehlo.iota dim = 0 : tensor<2x3xi32>
  %i1 = stablehlo.iota dim = 1 : tensor<2x3xf32>
  %i64 = stablehlo.iota dim = 0 : tensor<4xi64>
  // ui8 literals up to 255; i1 literals
  %u = stablehlo.constant dense<[0, 255]> : tensor<2xui8>
  %b = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
  return %c, %h, %bs, %br, %bc, %bp, %rs, %tr, %t3, %sl, %c1, %c0, %i0, %i1, %i64, %u, %b : tensor<2x2xf32>, tensor<3xf32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<3x2x2xi32>, tensor<3x2xi32>, tensor<3x2xi32>, tensor<2x2x3xi32>, tensor<1x2xi32>, tensor<2x4xi32>, tensor<3x3xi32>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<4xi64>, tensor<2xui8>, tensor<3xi1>
}
