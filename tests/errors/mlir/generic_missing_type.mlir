// expect: 7:5: error: unexpected string, expected ':', '(', '{' or '<'
// stage: syntax
"builtin.module"() ({
  "func.func"() ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "mhlo.add"(%arg0, %arg0)
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) {function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "f"} : () -> ()
}) : () -> ()
