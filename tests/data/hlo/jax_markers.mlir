// What jax.jit(f).lower(...).as_text() writes beside the computation:
// sharding constraints (Shardy's sdy.sharding_constraint; GSPMD's
// custom_call @Sharding) and jax.checkpoint's optimization_barrier. carve
// passes each value through; the sdy constraint becomes a `shard value`
// statement of --tactics-out.
module @markers {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x8xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {backend_config = "", mhlo.sharding = "{devices=[1,2]<=[2]}"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3:2 = stablehlo.optimization_barrier %2, %0 : tensor<8x8xf32>, tensor<8x8xf32>
    %4 = stablehlo.add %3#0, %3#1 : tensor<8x8xf32>
    return %4 : tensor<8x8xf32>
  }
}
