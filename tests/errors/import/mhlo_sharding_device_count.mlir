// expect: error: mhlo.sharding "{devices=[2,1]<=[3]}": the device shape does not hold as many devices as the tiles
// stage: import
func.func @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[3]}"}) -> tensor<8x4xf32> {
  return %a : tensor<8x4xf32>
}
