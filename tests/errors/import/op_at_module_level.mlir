// expect: 4:8: error: stablehlo.constant at module level: a module holds functions (func.func) and meshes; the ops belong inside a function
// stage: import
module {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  func.func @main(%a: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32>
  }
}
