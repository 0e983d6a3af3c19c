// expect: 5:10: error: stablehlo.while: the condition is computed at run time
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %0:1 = stablehlo.while(%iterArg = %a) : tensor<f32>
   cond {
    %1 = stablehlo.compare  LT, %iterArg, %c,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.add %iterArg, %iterArg : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }
  return %0#0 : tensor<f32>
}
