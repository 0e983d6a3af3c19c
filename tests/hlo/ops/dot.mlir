// dot_general and dot: StableHLO spec "dot_general": result dims are the
// batch dims, then lhs's free dims, then rhs's free dims, each sum taken
// over the contracting dims; "dot" (MHLO/StableHLO) is the matrix or
// matrix-vector product. All sums below are exact in f32 (small integers),
// so any order of summation gives them.
func.func public @main() -> (tensor<2x2xf32> {jax.result_info = "matmul"}, tensor<2x1x1xf32> {jax.result_info = "batched"},
                             tensor<2x2xf32> {jax.result_info = "contract_dim0"}, tensor<2xf32> {jax.result_info = "dot_mv"},
                             tensor<2x2xi32> {jax.result_info = "matmul_i32"}, tensor<2x3x2xf32> {jax.result_info = "outer_free"},
                             tensor<2x2xf64> {jax.result_info = "matmul_f64"}) {
  // [[1, 2, 3], [4, 5, 6]] . [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
  %a = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = stablehlo.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %mm = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // batch 2 of (1x3) . (3x1): batch 0: [1, 2, 3] . [1, 1, 1] = 6; batch 1: [4, 5, 6] . [1, 0, -1] = -2
  %x = stablehlo.constant dense<[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]> : tensor<2x1x3xf32>
  %y = stablehlo.constant dense<[[[1.0], [1.0], [1.0]], [[1.0], [0.0], [-1.0]]]> : tensor<2x3x1xf32>
  %bm = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x1x3xf32>, tensor<2x3x1xf32>) -> tensor<2x1x1xf32>
  // contracting dim 0 of both, m = [[1, 2], [3, 4]]: m^T . m = [[1*1 + 3*3, 1*2 + 3*4], [2*1 + 4*3, 2*2 + 4*4]] = [[10, 14], [14, 20]]
  %m = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ct = stablehlo.dot_general %m, %m, contracting_dims = [0] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  // dot, matrix . vector: [[1, 2], [3, 4]] . [1, -1] = [-1, -1]
  %v = stablehlo.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mv = stablehlo.dot %m, %v : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // integers: [[1, 2], [3, 4]] . [[65536, 0], [0, 65536]] = [[65536, 131072], [196608, 262144]]
  %mi = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %ni = stablehlo.constant dense<[[65536, 0], [0, 65536]]> : tensor<2x2xi32>
  %mmi = stablehlo.dot_general %mi, %ni, contracting_dims = [1] x [0] : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  // no contracting dims: the outer product; lhs [2] x rhs [3, 2] -> [2, 3, 2], r[i, j, k] = u[i] w[j, k]
  %u = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %w = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %op = stablehlo.dot_general %u, %w, contracting_dims = [] x [] : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<2x3x2xf32>
  // f64: [[0.1, 0], [0, 1]] . [[3, 0], [0, 1]] = [[0.30000000000000004, 0], [0, 1]] (0.1 * 3 in f64)
  %d0 = stablehlo.constant dense<[[0.1, 0.0], [0.0, 1.0]]> : tensor<2x2xf64>
  %d1 = stablehlo.constant dense<[[3.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf64>
  %md = stablehlo.dot_general %d0, %d1, contracting_dims = [1] x [0] : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  return %mm, %bm, %ct, %mv, %mmi, %op, %md : tensor<2x2xf32>, tensor<2x1x1xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xi32>, tensor<2x3x2xf32>, tensor<2x2xf64>
}
