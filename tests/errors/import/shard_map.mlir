// expect: 4:8: error: custom_call @SPMDFullToShardShape (a shard_map) is not supported: carve partitions the whole program itself
// stage: import
func.func @main(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%a) {mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
