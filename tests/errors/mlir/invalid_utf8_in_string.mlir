// expect: 3:34: error: invalid UTF-8 in string (byte \xe9); write other bytes as \XX escapes
// stage: syntax
module @m attributes {name = "café"} {
}
