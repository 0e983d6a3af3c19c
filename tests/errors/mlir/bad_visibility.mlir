// expect: 4:13: error: unexpected 'secret', expected public, private or nested, or the function's name
// stage: syntax
module @m {
  func.func secret @f() {
    return
  }
}
