// sort (jnp.sort, argsort) and chlo.top_k (lax.top_k): StableHLO spec and
// XLA semantics. carve sorts with a bitonic network of compare-exchange
// steps (the comparator applied to whole tensors, select to swap), the
// original index breaking ties, so the order is stable. Expected values
// from Python's sorted (stable).
func.func public @main() -> (tensor<2x5xf32> {jax.result_info = "ascending"}, tensor<7xf32> {jax.result_info = "argsort_values"},
                             tensor<7xi32> {jax.result_info = "argsort_stable"}, tensor<3x4xi32> {jax.result_info = "along_dim0"},
                             tensor<2x3xf32> {jax.result_info = "top3_values"}, tensor<2x3xi32> {jax.result_info = "top3_indices"},
                             tensor<2x2xf32> {jax.result_info = "top2_generic"}) {
  %x = stablehlo.constant dense<[[3.0, -1.0, 2.0, -1.0, 0.5], [9.0, 8.0, 7.0, 6.0, 5.0]]> : tensor<2x5xf32>
  %s1 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  LT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // descending by value over 7 elements (padded to 8), ties in their original order
  %y = stablehlo.constant dense<[1.0, 4.0, 1.0, 4.0, -2.0, 4.0, 0.0]> : tensor<7xf32>
  %iy = stablehlo.iota dim = 0 : tensor<7xi32>
  %s2:2 = "stablehlo.sort"(%y, %iy) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %g = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %g : tensor<i1>
  }) : (tensor<7xf32>, tensor<7xi32>) -> (tensor<7xf32>, tensor<7xi32>)
  // integers along dim 0 (3 rows: padded to 4)
  %z = stablehlo.constant dense<[[5, 1, 7, 0], [2, 9, 7, -3], [8, 1, -1, 4]]> : tensor<3x4xi32>
  %s3 = "stablehlo.sort"(%z) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %c = stablehlo.compare  LT, %a, %b,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<3x4xi32>) -> tensor<3x4xi32>
  // top_k: the largest 3 of each row, the lower index first among equals
  %w = stablehlo.constant dense<[[1.0, 5.0, 3.0, 5.0, 2.0, 4.0], [0.0, 0.0, -1.0, 0.0, -2.0, 7.0]]> : tensor<2x6xf32>
  %t:2 = chlo.top_k(%w, k = 3) : tensor<2x6xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)
  %u:2 = "chlo.top_k"(%w) {k = 2 : i64} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  return %s1, %s2#0, %s2#1, %s3, %t#0, %t#1, %u#0 : tensor<2x5xf32>, tensor<7xf32>, tensor<7xi32>, tensor<3x4xi32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x2xf32>
}
