// expect: 5:5: error: unexpected 'module': a module may only be at the top of the file
// stage: syntax
module @m {
  func.func @f() {
    module @inner {
    }
    return
  }
}
