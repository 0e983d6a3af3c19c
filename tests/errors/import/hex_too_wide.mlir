// expect: 4:44: error: stablehlo.constant: the hex literal 0x7FF8000000000000 has more bits than f32 holds (32)
// stage: import
func.func @main() -> tensor<3xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0, 0x7FF8000000000000]> : tensor<3xf32>
  return %0 : tensor<3xf32>
}
