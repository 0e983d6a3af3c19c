// expect: 10:1: error: unexpected end of input, expected '}' to close region 'reducer'
// stage: syntax
func.func @f(%x: tensor<4x8xf32>, %c: tensor<f32>) -> tensor<4xf32> {
  %0 = stablehlo.reduce(%x init: %c) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>

  return %0 : tensor<4xf32>
