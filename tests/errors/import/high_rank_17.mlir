// expect: 3:28: error: tensors of rank 17 are not supported (at most 16)
// stage: import
func.func public @main(%x: tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x2xf32> {
  return %x : tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x2xf32>
}
