// expect: 6:45: error: unexpected end of input, expected an element type such as f32
// stage: syntax
module @jit_f {
  func.func public @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x8xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<4x