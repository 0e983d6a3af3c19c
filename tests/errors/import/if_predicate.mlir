// expect: 4:8: error: stablehlo.if: the predicate must be a scalar i1, not f32[]
// stage: import
func.func @main(%p: tensor<f32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
