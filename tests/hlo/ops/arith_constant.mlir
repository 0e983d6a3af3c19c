// arith.constant, as tt-mlir's and torch-mlir's exports write constants
// beside StableHLO ops: a dense tensor (splat or list), a plain scalar
// (3.0 : f32, 7 : i32) and the generic form with its value property.
func.func public @main() -> (tensor<4xf32> {jax.result_info = "sum"}, tensor<f32> {jax.result_info = "scalar"},
                             tensor<2xi32> {jax.result_info = "ints"}) {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %d = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = arith.constant 3.0 : f32
  %f = "arith.constant"() <{value = dense<1.5> : tensor<f32>}> : () -> tensor<f32>
  %i = arith.constant 7 : i32
  %j = arith.constant dense<[-1, 5]> : tensor<2xi32>
  %0 = stablehlo.multiply %c, %d : tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.add %0, %1 : tensor<4xf32>
  %3 = stablehlo.multiply %e, %f : tensor<f32>
  %4 = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<2xi32>
  %5 = stablehlo.add %4, %j : tensor<2xi32>
  return %2, %3, %5 : tensor<4xf32>, tensor<f32>, tensor<2xi32>
}
