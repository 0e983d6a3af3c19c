// case and if (lax.switch, lax.cond): StableHLO spec: the branch the index
// picks runs, an index out of range picks the last branch. carve takes the
// branch when the index is known as it reads the program, else runs every
// branch and selects each result. Branches read values from outside.
func.func public @main() -> (tensor<2xf32> {jax.result_info = "if_known"}, tensor<2xf32> {jax.result_info = "case_out_of_range"},
                             tensor<2xf32> {jax.result_info = "if_runtime"}, tensor<2xi32> {jax.result_info = "case_runtime"},
                             tensor<f32> {jax.result_info = "case_runtime_second"}) {
  %x = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %t = stablehlo.constant dense<true> : tensor<i1>
  // true: the first branch -> x * x = [2.25, 4]
  %r1 = "stablehlo.if"(%t) ({
    %a = stablehlo.multiply %x, %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }, {
    %a = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  // index 7 of 3 branches: the last -> x + x = [3, -4]
  %c7 = stablehlo.constant dense<7> : tensor<i32>
  %r2 = "stablehlo.case"(%c7) ({
    stablehlo.return %x : tensor<2xf32>
  }, {
    %a = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }, {
    %a = stablehlo.add %x, %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  // a predicate computed at run time: x[0] > 1 is true -> -x = [-1.5, 2]
  %x0 = stablehlo.slice %x [0:1] : (tensor<2xf32>) -> tensor<1xf32>
  %x0s = stablehlo.reshape %x0 : (tensor<1xf32>) -> tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %p = stablehlo.compare  GT, %x0s, %one,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %r3 = "stablehlo.if"(%p) ({
    %a = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }, {
    %a = stablehlo.exponential %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  // an index computed at run time: convert(x0s) = 1 -> the second branch, [10, 20] (integers)
  %i = stablehlo.convert %x0s : (tensor<f32>) -> tensor<i32>
  %r4:2 = "stablehlo.case"(%i) ({
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %b = stablehlo.constant dense<0.5> : tensor<f32>
    stablehlo.return %a, %b : tensor<2xi32>, tensor<f32>
  }, {
    %a = stablehlo.constant dense<[10, 20]> : tensor<2xi32>
    %b = stablehlo.multiply %x0s, %x0s : tensor<f32>
    stablehlo.return %a, %b : tensor<2xi32>, tensor<f32>
  }, {
    %a = stablehlo.constant dense<[100, 200]> : tensor<2xi32>
    stablehlo.return %a, %one : tensor<2xi32>, tensor<f32>
  }) : (tensor<i32>) -> (tensor<2xi32>, tensor<f32>)
  return %r1, %r2, %r3, %r4#0, %r4#1 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi32>, tensor<f32>
}
