// expect: 10:12: error: stablehlo.while: the program's loops run more than 100000 iterations in all
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %a) : tensor<i32>, tensor<f32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %1:1 = stablehlo.while(%iterArg_1 = %iterArg_0) : tensor<f32>
     cond {
      %lim = stablehlo.constant dense<1000> : tensor<i32>
      %2 = stablehlo.compare  LT, %iterArg, %lim,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      stablehlo.return %iterArg_1 : tensor<f32>
    }
    stablehlo.return %iterArg, %1#0 : tensor<i32>, tensor<f32>
  }
  return %0#1 : tensor<f32>
}
