// expect: 5:10: error: stablehlo.while: the program's loops run more than 100000 iterations in all; carve unrolls loops
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %a) : tensor<i32>, tensor<f32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    stablehlo.return %iterArg, %iterArg_0 : tensor<i32>, tensor<f32>
  }
  return %0#1 : tensor<f32>
}
