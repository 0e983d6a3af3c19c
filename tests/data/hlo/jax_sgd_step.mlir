// A training step as jax.jit(step).lower(params, x, y).as_text(debug_info=True)
// prints one (written by hand in that shape: argument and result paths,
// location ranges): step(params, x, y) -> (loss, params - 0.1 * grad).
// The results [1]['b'] and [1]['w'] are new values of params['b'] and
// params['w']; x and y are data.
#loc1 = loc("step.py":12:0 to :40)
#loc2 = loc("step.py":13:9 to 14:20)
module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32> {jax.arg_info = "params['b']"} loc("params['b']"), %arg1: tensor<4x8xf32> {jax.arg_info = "params['w']"} loc("params['w']"), %arg2: tensor<16x4xf32> {jax.arg_info = "x"} loc("x"), %arg3: tensor<16x8xf32> {jax.arg_info = "y"} loc("y")) -> (tensor<f32> {jax.result_info = "[0]"}, tensor<8xf32> {jax.result_info = "[1]['b']"}, tensor<4x8xf32> {jax.result_info = "[1]['w']"}) {
    %0 = stablehlo.dot_general %arg2, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x4xf32>, tensor<4x8xf32>) -> tensor<16x8xf32> loc(#loc2)
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<16x8xf32> loc(#loc2)
    %2 = stablehlo.add %0, %1 : tensor<16x8xf32> loc(#loc2)
    %3 = stablehlo.subtract %2, %arg3 : tensor<16x8xf32> loc(#loc2)
    %4 = stablehlo.multiply %3, %3 : tensor<16x8xf32> loc(#loc2)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc1)
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32> loc(#loc2)
    %cst_0 = stablehlo.constant dense<1.280000e+02> : tensor<f32> loc(#loc1)
    %6 = stablehlo.divide %5, %cst_0 : tensor<f32> loc(#loc2)
    %cst_1 = stablehlo.constant dense<1.562500e-02> : tensor<16x8xf32> loc(#loc1)
    %7 = stablehlo.multiply %cst_1, %3 : tensor<16x8xf32> loc(#loc2)
    %8 = stablehlo.reduce(%7 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32> loc(#loc2)
    %9 = stablehlo.dot_general %arg2, %7, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32> loc(#loc2)
    %cst_2 = stablehlo.constant dense<1.000000e-01> : tensor<8xf32> loc(#loc1)
    %10 = stablehlo.multiply %cst_2, %8 : tensor<8xf32> loc(#loc1)
    %11 = stablehlo.subtract %arg0, %10 : tensor<8xf32> loc(#loc1)
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<4x8xf32> loc(#loc1)
    %12 = stablehlo.multiply %cst_3, %9 : tensor<4x8xf32> loc(#loc1)
    %13 = stablehlo.subtract %arg1, %12 : tensor<4x8xf32> loc(#loc1)
    return %6, %11, %13 : tensor<f32>, tensor<8xf32>, tensor<4x8xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
