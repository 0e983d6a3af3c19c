// jax.lax.scan over 3 stacked layers, as jit(f).lower(...).as_text() writes
// it: a while loop whose counter runs from constants, the layer's weights
// read with dynamic_slice at the counter, each step's output written into
// the stacked ys with dynamic_update_slice. carve unrolls it; the result
// must equal scan_unrolled.mlir, the same function written out by hand.
func.func public @main(%arg0: tensor<3x4x4xf32>, %arg1: tensor<2x4xf32>) -> (tensor<2x4xf32> {jax.result_info = "carry"}, tensor<3x2x4xf32> {jax.result_info = "ys"}) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<3x2x4xf32>
  %0:4 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg1, %iterArg_1 = %cst, %iterArg_2 = %arg0) : tensor<i32>, tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<3x4x4xf32>
   cond {
    %c_3 = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare  LT, %iterArg, %c_3,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_slice %iterArg_2, %iterArg, %c_3, %c_3, sizes = [1, 4, 4] : (tensor<3x4x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x4xf32>
    %2 = stablehlo.reshape %1 : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
    %3 = stablehlo.dot_general %iterArg_0, %2, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %4 = stablehlo.tanh %3 : tensor<2x4xf32>
    %5 = stablehlo.reshape %4 : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
    %6 = stablehlo.dynamic_update_slice %iterArg_1, %5, %iterArg, %c_3, %c_3 : (tensor<3x2x4xf32>, tensor<1x2x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x2x4xf32>
    %c_4 = stablehlo.constant dense<1> : tensor<i32>
    %7 = stablehlo.add %iterArg, %c_4 : tensor<i32>
    stablehlo.return %7, %4, %6, %iterArg_2 : tensor<i32>, tensor<2x4xf32>, tensor<3x2x4xf32>, tensor<3x4x4xf32>
  }
  return %0#1, %0#2 : tensor<2x4xf32>, tensor<3x2x4xf32>
}
