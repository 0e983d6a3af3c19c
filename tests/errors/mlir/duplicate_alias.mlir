// expect: 9:1: error: alias '#loc1' is defined twice
// stage: syntax
module @m {
  func.func @f() {
    return loc(#loc1)
  }
}
#loc1 = loc("model.py":3:1)
#loc1 = loc("model.py":4:1)
