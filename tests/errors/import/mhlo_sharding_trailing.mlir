// expect: error: mhlo.sharding "{replicated} x": text after the sharding
// stage: import
func.func @main(%a: tensor<8x4xf32> {mhlo.sharding = "{replicated} x"}) -> tensor<8x4xf32> {
  return %a : tensor<8x4xf32>
}
