// expect: 8:1: error: unexpected '}': there is no open '{' to close
// stage: syntax
module @m {
  func.func @f() {
    return
  }
}
}
