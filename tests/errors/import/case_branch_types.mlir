// expect: 4:8: error: stablehlo.case: result 0 is f32[2] in branch 0 but i32[2] in branch 1
// stage: import
func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<2xf32>
  }, {
    %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    stablehlo.return %c : tensor<2xi32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
