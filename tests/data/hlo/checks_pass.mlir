// The layout of StableHLO's testdata corpus (stablehlo/testdata/*.mlir):
// @main calls @inputs and @expected, applies the op, and checks the result
// with custom_call @check.expect_close; plus the reference interpreter's
// check dialect (check.expect_eq_const, check.expect_almost_eq_const,
// check.expect_eq) and a bf16 literal that must round to bf16 (0.304688 is
// 0.3046875) before it is added:
// 0.3046875 - 3.984375 is -3.6875 in bf16, where 0.304688 - 3.984375 gives -3.671875. tests/e2e/import.sh runs it (exit 0) and
// checks_fail.mlir, the same with one expected value changed (exit 1).
module @jit_testcase attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2x3xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = call @inputs() : () -> tensor<2x3xf32>
    %1 = call @expected() : () -> tensor<2x3xf32>
    %2 = stablehlo.abs %0 : tensor<2x3xf32>
    stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
    %i = stablehlo.constant dense<[7, -8]> : tensor<2xi32>
    %j = stablehlo.add %i, %i : tensor<2xi32>
    check.expect_eq_const %j, dense<[14, -16]> : tensor<2xi32>
    check.expect_eq %j, %j : tensor<2xi32>
    %d = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
    %e = stablehlo.exponential %d : tensor<2xf64>
    check.expect_almost_eq_const %e, dense<[2.7182818284590451, 7.3890560989306504]> : tensor<2xf64>
    %h = stablehlo.constant dense<3.046880e-01> : tensor<bf16>
    %k = stablehlo.constant dense<-3.984375e+00> : tensor<bf16>
    %l = stablehlo.add %h, %k : tensor<bf16>
    check.expect_eq_const %l, dense<-3.687500e+00> : tensor<bf16>
    return %2 : tensor<2x3xf32>
  }
  func.func private @inputs() -> (tensor<2x3xf32> {mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<"0x0000003F0000A0BF0000004000006040000000800000E840"> : tensor<2x3xf32>
    return %cst : tensor<2x3xf32>
  }
  func.func private @expected() -> (tensor<2x3xf32> {mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<"0x0000003F0000A03F0000004000006040000000000000E840"> : tensor<2x3xf32>
    return %cst : tensor<2x3xf32>
  }
}
