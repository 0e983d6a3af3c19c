// Tensors of rank above 8 (carve holds up to 16): JAX writes them where
// jnp.repeat or jnp.tile insert size-1 dims around a broadcast. A rank-10
// broadcast, a transpose of it, a reshape back to rank 2, and a reduce over
// one of its ten dims. x = [[1, 2, 3], [4, 5, 6]]; b[i, 0.., j, k] = x[i, k];
// t = b with dims 0 and 9 swapped, so t[k, 0.., j, i] = x[i, k]; its rows
// read k-major: r[k, 2j + i] = x[i, k]; the sum over j is 2x.
func.func public @main() -> (tensor<3x4xf32> {jax.result_info = "tiled"}, tensor<2x3xf32> {jax.result_info = "sum"}) {
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = stablehlo.broadcast_in_dim %x, dims = [0, 9] : (tensor<2x3xf32>) -> tensor<2x1x1x1x1x1x1x1x2x3xf32>
  %t = stablehlo.transpose %b, dims = [9, 1, 2, 3, 4, 5, 6, 7, 8, 0] : (tensor<2x1x1x1x1x1x1x1x2x3xf32>) -> tensor<3x1x1x1x1x1x1x1x2x2xf32>
  %r = stablehlo.reshape %t : (tensor<3x1x1x1x1x1x1x1x2x2xf32>) -> tensor<3x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%b init: %z) applies stablehlo.add across dimensions = [8] : (tensor<2x1x1x1x1x1x1x1x2x3xf32>, tensor<f32>) -> tensor<2x1x1x1x1x1x1x1x3xf32>
  %s2 = stablehlo.reshape %s : (tensor<2x1x1x1x1x1x1x1x3xf32>) -> tensor<2x3xf32>
  return %r, %s2 : tensor<3x4xf32>, tensor<2x3xf32>
}
