// expect: 3:27: error: unterminated string: a string must end on the line where it starts
// stage: syntax
module @m attributes {a = "never closed} {
}
