// select: StableHLO spec "select": result[i] = pred[i] ? on_true[i] : on_false[i],
// or with a scalar pred the whole of on_true or of on_false. The value is
// taken as it is: NaN payloads, -0 and infinities pass through.
func.func public @main() -> (tensor<4xf32> {jax.result_info = "select_f32"}, tensor<3xi32> {jax.result_info = "select_i32"},
                             tensor<2xf32> {jax.result_info = "select_scalar_pred"}, tensor<2xi1> {jax.result_info = "select_i1"},
                             tensor<2x2xf32> {jax.result_info = "select_mask"}) {
  %p = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %a = stablehlo.constant dense<[-0.0, 1.0, 0x7FC00000, 2.0]> : tensor<4xf32>
  %b = stablehlo.constant dense<[5.0, 0xFF800000, 6.0, -0.0]> : tensor<4xf32>
  // [-0 (a), -inf (b), NaN (a), -0 (b)]
  %s = stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
  %q = stablehlo.constant dense<[false, true, true]> : tensor<3xi1>
  %c = stablehlo.constant dense<[-2147483648, 1, 2]> : tensor<3xi32>
  %d = stablehlo.constant dense<[2147483647, 3, 4]> : tensor<3xi32>
  %si = stablehlo.select %q, %c, %d : tensor<3xi1>, tensor<3xi32>
  // scalar pred false: all of on_false
  %f = stablehlo.constant dense<false> : tensor<i1>
  %e = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %ss = stablehlo.select %f, %e, %g : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // booleans selected: [T ? F : T, F ? F : T] = [F, T]
  %h = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %k = stablehlo.constant dense<[false, false]> : tensor<2xi1>
  %l = stablehlo.constant dense<[true, true]> : tensor<2xi1>
  %sb = stablehlo.select %h, %k, %l : tensor<2xi1>, tensor<2xi1>
  // a causal mask as JAX writes it: iota >= iota, then select(x, -inf)
  %r = stablehlo.iota dim = 0 : tensor<2x2xi32>
  %co = stablehlo.iota dim = 1 : tensor<2x2xi32>
  %ge = stablehlo.compare  GE, %r, %co,  SIGNED : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
  %x = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<2x2xf32>
  %sm = stablehlo.select %ge, %x, %ninf : tensor<2x2xi1>, tensor<2x2xf32>
  return %s, %si, %ss, %sb, %sm : tensor<4xf32>, tensor<3xi32>, tensor<2xf32>, tensor<2xi1>, tensor<2x2xf32>
}
