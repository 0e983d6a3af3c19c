// expect: 5:8: error: chlo.next_after takes 2 operands, given 1
// stage: import
func.func @main() -> tensor<3xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %1 = chlo.next_after %0 : tensor<3xf32> -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
