// reduce: StableHLO spec "reduce": the body applied over the dimensions,
// starting from init_values (the order of the reduction is left to the
// implementation, so the sums below are exact in any order). The body is
// read in the compact form ("applies stablehlo.add") and the region form.
// maximum/minimum follow IEEE-754 (a NaN anywhere gives NaN); and/or reduce
// booleans.
func.func public @main() -> (tensor<2xf32> {jax.result_info = "sum_rows"}, tensor<3xf32> {jax.result_info = "sum_cols"},
                             tensor<f32> {jax.result_info = "sum_all"}, tensor<3xf32> {jax.result_info = "max_rows"},
                             tensor<3xf32> {jax.result_info = "min_rows"}, tensor<2xi1> {jax.result_info = "and_rows"},
                             tensor<2xi1> {jax.result_info = "or_rows"}, tensor<2xf32> {jax.result_info = "sum_init"},
                             tensor<2xi32> {jax.result_info = "max_i32"}, tensor<2xi32> {jax.result_info = "sum_i32"},
                             tensor<2xf32> {jax.result_info = "max_init"}) {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  // rows: 1 + 2 + 3 = 6, 4 + 5 + 6 = 15; columns: 5, 7, 9; all: 21
  %sr = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %sc = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %sa = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
  // max and min per row, region form, with init -inf and +inf:
  // [-inf, -inf, -inf] -> -inf / -inf; [1, NaN, 3] -> NaN / NaN; [-0, +0, -5] -> +0 / -5
  %y = stablehlo.constant dense<[[0xFF800000, 0xFF800000, 0xFF800000], [1.0, 0x7FC00000, 3.0], [-0.0, 0.0, -5.0]]> : tensor<3x3xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %mx = stablehlo.reduce(%y init: %ninf) across dimensions = [1] : (tensor<3x3xf32>, tensor<f32>) -> tensor<3xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }
  %mn = stablehlo.reduce(%y init: %pinf) applies stablehlo.minimum across dimensions = [1] : (tensor<3x3xf32>, tensor<f32>) -> tensor<3xf32>
  // booleans: and over [T, T, F] = F, [T, T, T] = T; or over [F, F, F] = F, [F, T, F] = T
  %p = stablehlo.constant dense<[[true, true, false], [true, true, true]]> : tensor<2x3xi1>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %ar = stablehlo.reduce(%p init: %t) applies stablehlo.and across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
  %q = stablehlo.constant dense<[[false, false, false], [false, true, false]]> : tensor<2x3xi1>
  %f = stablehlo.constant dense<false> : tensor<i1>
  %or = stablehlo.reduce(%q init: %f) across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
   reducer(%a: tensor<i1>, %b: tensor<i1>)  {
    %o = stablehlo.or %a, %b : tensor<i1>
    stablehlo.return %o : tensor<i1>
  }
  // an init that is not the identity takes part once: 10 + 6 = 16, 10 + 15 = 25
  %ten = stablehlo.constant dense<10.0> : tensor<f32>
  %si = stablehlo.reduce(%x init: %ten) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  // integers: max of [-5, -9, -7] = -5 and [INT32_MIN, INT32_MIN, INT32_MIN] = INT32_MIN (init INT32_MIN);
  // sum of [INT32_MAX, 1, 0] wraps to INT32_MIN, [-1, -2, -3] = -6
  %iv = stablehlo.constant dense<[[-5, -9, -7], [-2147483648, -2147483648, -2147483648]]> : tensor<2x3xi32>
  %imin = stablehlo.constant dense<-2147483648> : tensor<i32>
  %mi = stablehlo.reduce(%iv init: %imin) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
  %jv = stablehlo.constant dense<[[2147483647, 1, 0], [-1, -2, -3]]> : tensor<2x3xi32>
  %izero = stablehlo.constant dense<0> : tensor<i32>
  %si32 = stablehlo.reduce(%jv init: %izero) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
  // max with init 4 (not the identity): max(4, 1, 2, 3) = 4, max(4, 4, 5, 6) = 6
  %four = stablehlo.constant dense<4.0> : tensor<f32>
  %mxi = stablehlo.reduce(%x init: %four) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %sr, %sc, %sa, %mx, %mn, %ar, %or, %si, %mi, %si32, %mxi : tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi1>, tensor<2xi1>, tensor<2xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xf32>
}
