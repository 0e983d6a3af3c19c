// expect: 3:70: error: unexpected '}', expected an attribute
// stage: syntax
module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.sharding = } {
  func.func @f() {
    return
  }
}
