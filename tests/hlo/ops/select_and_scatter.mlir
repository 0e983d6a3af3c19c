// select_and_scatter (the gradient JAX writes for a max pool): XLA's
// semantics, checked against direct loops (tests/hlo/window_reference.py
// wrote this file and its expected values): in each window the element the
// select comparison keeps (a later one replaces it when select(kept,
// later) is false, so GE keeps the first maximum and GT the last; padding
// is never selected) receives the window's source value, added to init.
// The cases: a 2x2 max pool with ties (GE, GT), a 3x3 stride-2 pool with
// 'SAME' padding over negative values, overlapping windows with an init of
// 0.5, a min pool (LE).
func.func public @main() -> (tensor<1x4x4x1xf32> {jax.result_info = "max_pool_grad_ties"}, tensor<1x4x4x1xf32> {jax.result_info = "max_pool_grad_ties_gt"}, tensor<2x5x5x1xf32> {jax.result_info = "same_padding_negative"}, tensor<4x6xf32> {jax.result_info = "overlapping_init"}, tensor<3x8xf32> {jax.result_info = "min_pool_grad"}) {
  %max_pool_grad_ties_x = stablehlo.constant dense<[[[[1.0], [3.0], [3.0], [0.0]], [[2.0], [3.0], [1.0], [1.0]], [[5.0], [5.0], [0.0], [2.0]], [[5.0], [1.0], [2.0], [2.0]]]]> : tensor<1x4x4x1xf32>
  %max_pool_grad_ties_s = stablehlo.constant dense<[[[[4.0], [1.0]], [[3.0], [5.0]]]]> : tensor<1x2x2x1xf32>
  %max_pool_grad_ties_i = stablehlo.constant dense<0.0> : tensor<f32>
  %max_pool_grad_ties = "stablehlo.select_and_scatter"(%max_pool_grad_ties_x, %max_pool_grad_ties_s, %max_pool_grad_ties_i) <{padding = dense<[[0, 0], [0, 0], [0, 0], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  GE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<1x4x4x1xf32>, tensor<1x2x2x1xf32>, tensor<f32>) -> tensor<1x4x4x1xf32>
  %max_pool_grad_ties_gt_x = stablehlo.constant dense<[[[[1.0], [3.0], [3.0], [0.0]], [[2.0], [3.0], [1.0], [1.0]], [[5.0], [5.0], [0.0], [2.0]], [[5.0], [1.0], [2.0], [2.0]]]]> : tensor<1x4x4x1xf32>
  %max_pool_grad_ties_gt_s = stablehlo.constant dense<[[[[4.0], [1.0]], [[3.0], [5.0]]]]> : tensor<1x2x2x1xf32>
  %max_pool_grad_ties_gt_i = stablehlo.constant dense<0.0> : tensor<f32>
  %max_pool_grad_ties_gt = "stablehlo.select_and_scatter"(%max_pool_grad_ties_gt_x, %max_pool_grad_ties_gt_s, %max_pool_grad_ties_gt_i) <{padding = dense<[[0, 0], [0, 0], [0, 0], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<1x4x4x1xf32>, tensor<1x2x2x1xf32>, tensor<f32>) -> tensor<1x4x4x1xf32>
  %same_padding_negative_x = stablehlo.constant dense<[[[[-9.0], [-11.0], [-4.0], [-6.0], [-8.0]], [[-10.0], [-12.0], [-5.0], [-7.0], [-9.0]], [[-11.0], [-4.0], [-6.0], [-8.0], [-10.0]], [[-12.0], [-5.0], [-7.0], [-9.0], [-11.0]], [[-4.0], [-6.0], [-8.0], [-10.0], [-12.0]]], [[[-5.0], [-7.0], [-9.0], [-11.0], [-4.0]], [[-6.0], [-8.0], [-10.0], [-12.0], [-5.0]], [[-7.0], [-9.0], [-11.0], [-4.0], [-6.0]], [[-8.0], [-10.0], [-12.0], [-5.0], [-7.0]], [[-9.0], [-11.0], [-4.0], [-6.0], [-8.0]]]]> : tensor<2x5x5x1xf32>
  %same_padding_negative_s = stablehlo.constant dense<[[[[4.0], [1.0], [3.0]], [[5.0], [2.0], [4.0]], [[1.0], [3.0], [5.0]]], [[[2.0], [4.0], [1.0]], [[3.0], [5.0], [2.0]], [[4.0], [1.0], [3.0]]]]> : tensor<2x3x3x1xf32>
  %same_padding_negative_i = stablehlo.constant dense<0.0> : tensor<f32>
  %same_padding_negative = "stablehlo.select_and_scatter"(%same_padding_negative_x, %same_padding_negative_s, %same_padding_negative_i) <{padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  GE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<2x5x5x1xf32>, tensor<2x3x3x1xf32>, tensor<f32>) -> tensor<2x5x5x1xf32>
  %overlapping_init_x = stablehlo.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<4x6xf32>
  %overlapping_init_s = stablehlo.constant dense<[[4.0, 1.0, 3.0, 5.0], [2.0, 4.0, 1.0, 3.0]]> : tensor<2x4xf32>
  %overlapping_init_i = stablehlo.constant dense<0.5> : tensor<f32>
  %overlapping_init = "stablehlo.select_and_scatter"(%overlapping_init_x, %overlapping_init_s, %overlapping_init_i) <{padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  GE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<2x4xf32>, tensor<f32>) -> tensor<4x6xf32>
  %min_pool_grad_x = stablehlo.constant dense<[[-2.0, 5.0, 1.0, -3.0, 4.0, 0.0, -4.0, 3.0], [-1.0, -5.0, 2.0, -2.0, 5.0, 1.0, -3.0, 4.0], [0.0, -4.0, 3.0, -1.0, -5.0, 2.0, -2.0, 5.0]]> : tensor<3x8xf32>
  %min_pool_grad_s = stablehlo.constant dense<[[4.0, 1.0, 3.0, 5.0], [2.0, 4.0, 1.0, 3.0], [5.0, 2.0, 4.0, 1.0]]> : tensor<3x4xf32>
  %min_pool_grad_i = stablehlo.constant dense<0.0> : tensor<f32>
  %min_pool_grad = "stablehlo.select_and_scatter"(%min_pool_grad_x, %min_pool_grad_s, %min_pool_grad_i) <{padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  LE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }) : (tensor<3x8xf32>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x8xf32>
  return %max_pool_grad_ties, %max_pool_grad_ties_gt, %same_padding_negative, %overlapping_init, %min_pool_grad : tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>, tensor<2x5x5x1xf32>, tensor<4x6xf32>, tensor<3x8xf32>
}
