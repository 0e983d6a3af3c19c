// expect: 109:8: error: the program grows beyond 2000000 ops here as carve reads it: every call is inlined, and this call brings its function's ops again
// stage: import
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f0(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f0(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f1(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f1(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f1(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f2(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f2(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f2(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f3(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f3(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f3(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f4(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f4(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f4(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f5(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f5(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f5(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f6(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f6(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f6(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f7(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f7(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f7(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f8(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f8(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f8(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f9(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f9(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f9(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f10(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f10(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f10(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f11(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f11(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f11(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f12(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f12(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f12(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f13(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f13(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f13(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f14(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f14(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f14(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f15(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f15(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f15(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f16(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f16(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f16(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f17(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f17(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f17(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f18(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f18(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f18(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f19(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f19(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f19(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f20(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f20(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f20(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f21(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f21(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f21(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f22(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f22(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f22(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f23(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f23(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f23(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f24(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f24(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f24(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f25(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f25(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f25(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f26(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f26(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f26(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f27(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f27(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f27(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f28(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f28(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f28(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f29(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f29(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f29(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f30(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f30(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f30(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f31(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f31(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f31(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f32(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f32(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f32(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f33(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f33(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f33(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f34(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f34(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f34(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f35(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f35(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f35(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f36(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f36(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f36(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f37(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f37(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f37(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f38(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f38(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f38(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @f39(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @f39(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @f39(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %a : tensor<f32>
  return %0 : tensor<f32>
}
