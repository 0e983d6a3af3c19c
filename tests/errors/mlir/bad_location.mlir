// expect: 5:16: error: unexpected 'nowhere' in a location, expected unknown, a string, #alias, fused[...] or callsite(...)
// stage: syntax
module @m {
  func.func @f() {
    return loc(nowhere)
  }
}
