// expect: error: mhlo.sharding "{devices=[2}": expected the tile counts
// stage: import
func.func @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2}"}) -> tensor<8x4xf32> {
  return %a : tensor<8x4xf32>
}
