// expect: 3:29: error: unknown escape in string; only \", \\, \n, \t and \XX (two hex digits) may follow a backslash
// stage: syntax
module @m attributes {a = "a\qb"} {
}
