// expect: 3:28: error: dynamic dims ('?') are not supported
// stage: import
func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}
