// A small Flax CNN's loss, as jax.jit(loss).lower(params, images, labels)
// .as_text() writes it: conv 3x3 (stride 1, 'SAME') -> relu -> max_pool
// 2x2 -> conv 3x3 (stride 2, Flax's asymmetric 'SAME' padding, two feature
// groups) -> relu -> avg_pool 2x2 -> flatten -> dense -> mean softmax
// cross-entropy against integer labels (one-hot by iota == label).
// tests/e2e/import.sh trains it with SGD, on one process and under a batch
// split on 2 MPI ranks (--check against one device).
module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3x1x8xf32> {jax.arg_info = "params['conv1']['kernel']"}, %arg1: tensor<8xf32> {jax.arg_info = "params['conv1']['bias']"},
                         %arg2: tensor<3x3x4x8xf32> {jax.arg_info = "params['conv2']['kernel']"}, %arg3: tensor<8xf32> {jax.arg_info = "params['conv2']['bias']"},
                         %arg4: tensor<32x10xf32> {jax.arg_info = "params['dense']['kernel']"}, %arg5: tensor<10xf32> {jax.arg_info = "params['dense']['bias']"},
                         %arg6: tensor<8x12x12x1xf32> {jax.arg_info = "images"}, %arg7: tensor<8xi32> {jax.arg_info = "labels"}) -> (tensor<f32> {jax.result_info = ""}) {
    %0 = stablehlo.convolution(%arg6, %arg0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x12x12x1xf32>, tensor<3x3x1x8xf32>) -> tensor<8x12x12x8xf32>
    %1 = stablehlo.reshape %arg1 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<8x12x12x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x12x12x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x12x12x8xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<8x12x12x8xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %6 = "stablehlo.reduce_window"(%5, %cst_0) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %50 = stablehlo.maximum %arg8, %arg9 : tensor<f32>
      stablehlo.return %50 : tensor<f32>
    }) : (tensor<8x12x12x8xf32>, tensor<f32>) -> tensor<8x6x6x8xf32>
    %7 = stablehlo.convolution(%6, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x6x6x8xf32>, tensor<3x3x4x8xf32>) -> tensor<8x3x3x8xf32>
    %8 = stablehlo.reshape %arg3 : (tensor<8xf32>) -> tensor<1x1x1x8xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x8xf32>) -> tensor<8x3x3x8xf32>
    %10 = stablehlo.add %7, %9 : tensor<8x3x3x8xf32>
    %11 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x3x3x8xf32>
    %12 = stablehlo.maximum %10, %11 : tensor<8x3x3x8xf32>
    %13 = "stablehlo.reduce_window"(%12, %cst) <{padding = dense<[[0, 0], [0, 1], [0, 1], [0, 0]]> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %50 = stablehlo.add %arg8, %arg9 : tensor<f32>
      stablehlo.return %50 : tensor<f32>
    }) : (tensor<8x3x3x8xf32>, tensor<f32>) -> tensor<8x2x2x8xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x2x2x8xf32>
    %15 = stablehlo.divide %13, %14 : tensor<8x2x2x8xf32>
    %16 = stablehlo.reshape %15 : (tensor<8x2x2x8xf32>) -> tensor<8x32xf32>
    %17 = stablehlo.dot_general %16, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
    %18 = stablehlo.reshape %arg5 : (tensor<10xf32>) -> tensor<1x10xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<8x10xf32>
    %20 = stablehlo.add %17, %19 : tensor<8x10xf32>
    %21 = stablehlo.reduce(%20 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %23 = stablehlo.subtract %20, %22 : tensor<8x10xf32>
    %24 = stablehlo.exponential %23 : tensor<8x10xf32>
    %25 = stablehlo.reduce(%24 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %26 = stablehlo.log %25 : tensor<8xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0] : (tensor<8xf32>) -> tensor<8x10xf32>
    %28 = stablehlo.subtract %23, %27 : tensor<8x10xf32>
    %29 = stablehlo.iota dim = 1 : tensor<8x10xi32>
    %30 = stablehlo.broadcast_in_dim %arg7, dims = [0] : (tensor<8xi32>) -> tensor<8x10xi32>
    %31 = stablehlo.compare  EQ, %29, %30,  SIGNED : (tensor<8x10xi32>, tensor<8x10xi32>) -> tensor<8x10xi1>
    %32 = stablehlo.convert %31 : (tensor<8x10xi1>) -> tensor<8x10xf32>
    %33 = stablehlo.multiply %28, %32 : tensor<8x10xf32>
    %34 = stablehlo.reduce(%33 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<f32>
    %35 = stablehlo.negate %34 : tensor<f32>
    %cst_2 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %36 = stablehlo.divide %35, %cst_2 : tensor<f32>
    return %36 : tensor<f32>
  }
}
