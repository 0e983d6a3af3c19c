// expect: 4:8: error: stablehlo.slice: stride 9223372036854775807 is beyond 2^31; carve reads pads, strides, dilations and windows up to that
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<1xf32> {
  %1 = stablehlo.slice %a [0:4:9223372036854775807] : (tensor<4xf32>) -> tensor<1xf32>
  return %1 : tensor<1xf32>
}
