// expect: 4:3: error: a generic func.func needs sym_name = "name"
// stage: syntax
"builtin.module"() ({
  "func.func"() ({
    "func.return"() : () -> ()
  }) {function_type = () -> ()} : () -> ()
}) : () -> ()
