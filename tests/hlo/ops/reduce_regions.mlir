// reduce with regions carve has no single op for: jnp.argmax as JAX writes
// it (a reduce of value and index pairs whose region takes the larger
// value, NaN first, and the smaller index on a tie), argmin in the generic
// form, a product, a bitwise or of integers. carve applies the region to
// whole tensors, halving the reduced dim level by level. Expected: argmax
// is the first NaN if any, else the first maximum (JAX's definition).
func.func public @main() -> (tensor<4xf32> {jax.result_info = "max"}, tensor<4xi32> {jax.result_info = "argmax"},
                             tensor<5xi32> {jax.result_info = "argmin"}, tensor<2xf32> {jax.result_info = "product"},
                             tensor<3xi32> {jax.result_info = "or_bits"}, tensor<f32> {jax.result_info = "product_all"}) {
  // rows: ties at 1 and 3; a NaN at 2 among larger values; all equal; a single maximum last
  %x = stablehlo.constant dense<[[1.0, 5.0, 2.0, 5.0, 0.0], [3.0, 9.0, 0x7FC00000, 9.0, 0x7FC00000], [7.0, 7.0, 7.0, 7.0, 7.0], [-3.0, -2.0, -5.0, -4.0, -1.0]]> : tensor<4x5xf32>
  %iota = stablehlo.iota dim = 1 : tensor<4x5xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %c0) across dimensions = [1] : (tensor<4x5xf32>, tensor<4x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
    %4 = stablehlo.compare  GT, %arg1, %arg3,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %5 = stablehlo.compare  NE, %arg1, %arg1,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.or %4, %5 : tensor<i1>
    %7 = stablehlo.compare  EQ, %arg1, %arg3,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.compare  LT, %arg2, %arg4,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %9 = stablehlo.and %7, %8 : tensor<i1>
    %10 = stablehlo.or %6, %9 : tensor<i1>
    %11 = stablehlo.select %6, %arg1, %arg3 : tensor<i1>, tensor<f32>
    %12 = stablehlo.select %10, %arg2, %arg4 : tensor<i1>, tensor<i32>
    stablehlo.return %11, %12 : tensor<f32>, tensor<i32>
  }
  // argmin over 7 rows (an odd count at every level), generic form: operands, then inits
  %y = stablehlo.constant dense<[[4, 1, 9, 2, 2], [3, 1, 8, 2, 5], [5, 0, 8, 7, 2], [3, 6, 9, 2, 9], [6, 0, 1, 9, 2], [3, 2, 7, 1, 4], [9, 5, 1, 0, 2]]> : tensor<7x5xi32>
  %yi = stablehlo.iota dim = 0 : tensor<7x5xi32>
  %big = stablehlo.constant dense<2147483647> : tensor<i32>
  %m:2 = "stablehlo.reduce"(%y, %yi, %big, %c0) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<i32>, %ai: tensor<i32>, %b: tensor<i32>, %bi: tensor<i32>):
    %lt = stablehlo.compare  LT, %a, %b,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare  EQ, %a, %b,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %il = stablehlo.compare  LT, %ai, %bi,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %t = stablehlo.and %eq, %il : tensor<i1>
    %p = stablehlo.or %lt, %t : tensor<i1>
    %v = stablehlo.select %lt, %a, %b : tensor<i1>, tensor<i32>
    %i = stablehlo.select %p, %ai, %bi : tensor<i1>, tensor<i32>
    stablehlo.return %v, %i : tensor<i32>, tensor<i32>
  }) : (tensor<7x5xi32>, tensor<7x5xi32>, tensor<i32>, tensor<i32>) -> (tensor<5xi32>, tensor<5xi32>)
  // a product over dims 0 and 2 with an init of 2: [2 * 1*2*3*4*5*6, 2 * (-1)*0.5*2*1*3*0.25]
  %z = stablehlo.constant dense<[[[1.0, -1.0], [2.0, 0.5], [3.0, 2.0]], [[4.0, 1.0], [5.0, 3.0], [6.0, 0.25]]]> : tensor<2x3x2xf32>
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %pr = stablehlo.reduce(%z init: %two) applies stablehlo.multiply across dimensions = [0, 1] : (tensor<2x3x2xf32>, tensor<f32>) -> tensor<2xf32>
  // bitwise or of integers along dim 1
  %w = stablehlo.constant dense<[[1, 2, 4], [8, 8, 8], [-16, 1, 0]]> : tensor<3x3xi32>
  %ob = stablehlo.reduce(%w init: %c0) applies stablehlo.or across dimensions = [1] : (tensor<3x3xi32>, tensor<i32>) -> tensor<3xi32>
  // a product of everything (one level of 12 halving to 1)
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %pa = stablehlo.reduce(%z init: %one) applies stablehlo.multiply across dimensions = [0, 1, 2] : (tensor<2x3x2xf32>, tensor<f32>) -> tensor<f32>
  return %r#0, %r#1, %m#1, %pr, %ob, %pa : tensor<4xf32>, tensor<4xi32>, tensor<5xi32>, tensor<2xf32>, tensor<3xi32>, tensor<f32>
}
