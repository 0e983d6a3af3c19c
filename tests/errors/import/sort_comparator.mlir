// expect: 4:10: error: stablehlo.sort needs a comparator region of 4 arguments
// stage: import
func.func @main(%x: tensor<5xf32>, %i: tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %s:2 = "stablehlo.sort"(%x, %i) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare  LT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)
  return %s#0, %s#1 : tensor<5xf32>, tensor<5xi32>
}
