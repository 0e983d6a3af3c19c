// reduce_window: StableHLO spec semantics, checked against direct loops over
// every result element (tests/hlo/window_reference.py wrote this file and
// its expected values). The cases: Flax's max_pool (2x2, stride 2, -inf
// as the init); a 3x3 stride 2 max pool with padding; a sum pool with
// 'SAME' padding (avg_pool before its division); jnp.cumsum as JAX
// writes it on CPU (a window as long as the row, padded before); min with
// base and window dilation and an init (0.5) that is not min's identity;
// an i32 max pool with INT_MIN as the init; a product (a region carve
// applies to whole tensors) with an init of 2, in window order.
func.func public @main() -> (tensor<2x2x2x3xf32> {jax.result_info = "max_pool_2x2"}, tensor<1x3x3x2xf32> {jax.result_info = "max_pool_3x3_same"}, tensor<2x4x4x1xf32> {jax.result_info = "sum_pool_same"}, tensor<3x7xf32> {jax.result_info = "cumsum"}, tensor<3x7xf32> {jax.result_info = "min_dilated_init"}, tensor<3x3xi32> {jax.result_info = "max_i32"}, tensor<3x3xf32> {jax.result_info = "product_region"}) {
  %max_pool_2x2_x = stablehlo.constant dense<[[[[-2.0, 5.0, 1.0], [-3.0, 4.0, 0.0], [-4.0, 3.0, -1.0], [-5.0, 2.0, -2.0], [5.0, 1.0, -3.0]], [[4.0, 0.0, -4.0], [3.0, -1.0, -5.0], [2.0, -2.0, 5.0], [1.0, -3.0, 4.0], [0.0, -4.0, 3.0]], [[-1.0, -5.0, 2.0], [-2.0, 5.0, 1.0], [-3.0, 4.0, 0.0], [-4.0, 3.0, -1.0], [-5.0, 2.0, -2.0]], [[5.0, 1.0, -3.0], [4.0, 0.0, -4.0], [3.0, -1.0, -5.0], [2.0, -2.0, 5.0], [1.0, -3.0, 4.0]]], [[[0.0, -4.0, 3.0], [-1.0, -5.0, 2.0], [-2.0, 5.0, 1.0], [-3.0, 4.0, 0.0], [-4.0, 3.0, -1.0]], [[-5.0, 2.0, -2.0], [5.0, 1.0, -3.0], [4.0, 0.0, -4.0], [3.0, -1.0, -5.0], [2.0, -2.0, 5.0]], [[1.0, -3.0, 4.0], [0.0, -4.0, 3.0], [-1.0, -5.0, 2.0], [-2.0, 5.0, 1.0], [-3.0, 4.0, 0.0]], [[-4.0, 3.0, -1.0], [-5.0, 2.0, -2.0], [5.0, 1.0, -3.0], [4.0, 0.0, -4.0], [3.0, -1.0, -5.0]]]]> : tensor<2x4x5x3xf32>
  %max_pool_2x2_i = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max_pool_2x2 = "stablehlo.reduce_window"(%max_pool_2x2_x, %max_pool_2x2_i) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [0, 0], [0, 0], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<2x4x5x3xf32>, tensor<f32>) -> tensor<2x2x2x3xf32>
  %max_pool_3x3_same_x = stablehlo.constant dense<[[[[-2.0, 5.0], [1.0, -3.0], [4.0, 0.0], [-4.0, 3.0], [-1.0, -5.0]], [[2.0, -2.0], [5.0, 1.0], [-3.0, 4.0], [0.0, -4.0], [3.0, -1.0]], [[-5.0, 2.0], [-2.0, 5.0], [1.0, -3.0], [4.0, 0.0], [-4.0, 3.0]], [[-1.0, -5.0], [2.0, -2.0], [5.0, 1.0], [-3.0, 4.0], [0.0, -4.0]], [[3.0, -1.0], [-5.0, 2.0], [-2.0, 5.0], [1.0, -3.0], [4.0, 0.0]]]]> : tensor<1x5x5x2xf32>
  %max_pool_3x3_same_i = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max_pool_3x3_same = "stablehlo.reduce_window"(%max_pool_3x3_same_x, %max_pool_3x3_same_i) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<1x5x5x2xf32>, tensor<f32>) -> tensor<1x3x3x2xf32>
  %sum_pool_same_x = stablehlo.constant dense<[[[[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]]], [[[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]]]]> : tensor<2x4x4x1xf32>
  %sum_pool_same_i = stablehlo.constant dense<0.0> : tensor<f32>
  %sum_pool_same = "stablehlo.reduce_window"(%sum_pool_same_x, %sum_pool_same_i) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<2x4x4x1xf32>, tensor<f32>) -> tensor<2x4x4x1xf32>
  %cumsum_x = stablehlo.constant dense<[[-1.0, -3.0, 4.0, 2.0, 0.0, -2.0, -4.0], [3.0, 1.0, -1.0, -3.0, 4.0, 2.0, 0.0], [-2.0, -4.0, 3.0, 1.0, -1.0, -3.0, 4.0]]> : tensor<3x7xf32>
  %cumsum_i = stablehlo.constant dense<0.0> : tensor<f32>
  %cumsum = "stablehlo.reduce_window"(%cumsum_x, %cumsum_i) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [6, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 7>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<3x7xf32>, tensor<f32>) -> tensor<3x7xf32>
  %min_dilated_init_x = stablehlo.constant dense<[[-1.5, 2.0, -1.0, 2.5], [-0.5, 3.0, 0.0, -3.0], [0.5, -2.5, 1.0, -2.0], [1.5, -1.5, 2.0, -1.0], [2.5, -0.5, 3.0, 0.0], [-3.0, 0.5, -2.5, 1.0], [-2.0, 1.5, -1.5, 2.0], [-1.0, 2.5, -0.5, 3.0], [0.0, -3.0, 0.5, -2.5]]> : tensor<9x4xf32>
  %min_dilated_init_i = stablehlo.constant dense<0.5> : tensor<f32>
  %min_dilated_init = "stablehlo.reduce_window"(%min_dilated_init_x, %min_dilated_init_i) <{base_dilations = array<i64: 1, 2>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 2, 1>, window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.minimum %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<9x4xf32>, tensor<f32>) -> tensor<3x7xf32>
  %max_i32_x = stablehlo.constant dense<[[-5, 2, -8, -1, 6], [-4, 3, -7, 0, 7], [-3, 4, -6, 1, 8], [-2, 5, -5, 2, -8], [-1, 6, -4, 3, -7], [0, 7, -3, 4, -6]]> : tensor<6x5xi32>
  %max_i32_i = stablehlo.constant dense<-2147483648> : tensor<i32>
  %max_i32 = "stablehlo.reduce_window"(%max_i32_x, %max_i32_i) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %r = stablehlo.maximum %a, %b : tensor<i32>
    stablehlo.return %r : tensor<i32>
  }) : (tensor<6x5xi32>, tensor<i32>) -> tensor<3x3xi32>
  %product_region_x = stablehlo.constant dense<[[0.5, -1.0, 0.0, 1.0, -0.5, 0.5], [-1.0, 0.0, 1.0, -0.5, 0.5, -1.0], [0.0, 1.0, -0.5, 0.5, -1.0, 0.0]]> : tensor<3x6xf32>
  %product_region_i = stablehlo.constant dense<2.0> : tensor<f32>
  %product_region = "stablehlo.reduce_window"(%product_region_x, %product_region_i) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<3x6xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %max_pool_2x2, %max_pool_3x3_same, %sum_pool_same, %cumsum, %min_dilated_init, %max_i32, %product_region : tensor<2x2x2x3xf32>, tensor<1x3x3x2xf32>, tensor<2x4x4x1xf32>, tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x3xi32>, tensor<3x3xf32>
}
