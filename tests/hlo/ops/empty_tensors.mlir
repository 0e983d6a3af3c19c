// Tensors with no elements: StableHLO allows dimensions of size 0 (spec
// "Types": a dimension size is a non-negative integer). slice with
// start = limit gives an empty tensor; reduce over an empty dimension gives
// its init value ("reduce": the schedule over no elements is the init
// alone); an empty constant is written dense<>; pad's negative edges can
// cut a dim to nothing (2 + 1 interior - 2 - 3 = 0).
func.func public @main() -> (tensor<0x3xi32> {jax.result_info = "slice_empty"}, tensor<f32> {jax.result_info = "min_empty"},
                             tensor<2xi32> {jax.result_info = "sum_empty_rows"}, tensor<2x0xi32> {jax.result_info = "pad_empty"}) {
  // a[1:1, 0:3] has no elements
  %a = stablehlo.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %se = stablehlo.slice %a [1:1, 0:3] : (tensor<2x3xi32>) -> tensor<0x3xi32>
  // min over nothing from +inf is +inf
  %e = stablehlo.constant dense<> : tensor<0xf32>
  %pinf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %me = stablehlo.reduce(%e init: %pinf) applies stablehlo.minimum across dimensions = [0] : (tensor<0xf32>, tensor<f32>) -> tensor<f32>
  // sums of the empty rows of a 2x0 tensor from init 5: [5, 5]
  %z = stablehlo.slice %a [0:2, 3:3] : (tensor<2x3xi32>) -> tensor<2x0xi32>
  %five = stablehlo.constant dense<5> : tensor<i32>
  %sz = stablehlo.reduce(%z init: %five) applies stablehlo.add across dimensions = [1] : (tensor<2x0xi32>, tensor<i32>) -> tensor<2xi32>
  %pe = stablehlo.pad %a, %five, low = [0, -2], high = [0, -3], interior = [0, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x0xi32>
  return %se, %me, %sz, %pe : tensor<0x3xi32>, tensor<f32>, tensor<2xi32>, tensor<2x0xi32>
}
