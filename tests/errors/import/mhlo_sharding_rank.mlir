// expect: error: mhlo.sharding "{devices=[2,2,2]<=[8]}": 3 tile counts for a value of rank 2
// stage: import
func.func @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,2,2]<=[8]}"}) -> tensor<8x4xf32> {
  return %a : tensor<8x4xf32>
}
