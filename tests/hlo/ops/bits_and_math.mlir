// remainder, atan2, tan, cbrt, the shifts, popcnt and count_leading_zeros:
// StableHLO spec semantics (and XLA's where the spec leaves it open: x % 0 = x,
// INT_MIN % -1 = 0, a shift count outside [0, width) gives 0 or, for an
// arithmetic right shift, the sign's fill, as LLVM's APInt in the reference
// interpreter). Expected values from Python's math (an independent libm) and
// integer arithmetic, rounded to f32 where the op is f32; within 1 ulp for
// atan2, tan and cbrt, exact for the rest.
func.func public @main() -> (tensor<12xf32> {jax.result_info = "rem_f32"}, tensor<12xf64> {jax.result_info = "rem_f64"}, tensor<8xi32> {jax.result_info = "rem_i32"}, tensor<12xf32> {jax.result_info = "atan2_f32"}, tensor<12xf64> {jax.result_info = "atan2_f64"}, tensor<11xf32> {jax.result_info = "tan_f32"}, tensor<11xf64> {jax.result_info = "tan_f64"}, tensor<11xf32> {jax.result_info = "cbrt_f32"}, tensor<11xf64> {jax.result_info = "cbrt_f64"}, tensor<10xi32> {jax.result_info = "shl_i32"}, tensor<10xi32> {jax.result_info = "shra_i32"}, tensor<10xi32> {jax.result_info = "shrl_i32"}, tensor<6xui8> {jax.result_info = "shl_ui8"}, tensor<6xui8> {jax.result_info = "shra_ui8"}, tensor<6xui8> {jax.result_info = "shrl_ui8"}, tensor<4xi64> {jax.result_info = "shl_i64"}, tensor<4xi64> {jax.result_info = "shra_i64"}, tensor<4xi64> {jax.result_info = "shrl_i64"}, tensor<8xi32> {jax.result_info = "popcnt_i32"}, tensor<8xi32> {jax.result_info = "clz_i32"}, tensor<6xi8> {jax.result_info = "popcnt_i8"}, tensor<6xi8> {jax.result_info = "clz_i8"}, tensor<4xi64> {jax.result_info = "clz_i64"}) {
  %rem_f32_0 = stablehlo.constant dense<[5.5, -5.5, 5.5, -5.5, 1.0, 0x7F800000, 2.0, -0.0, 0.0, 7.0, 1.0000000150474662e+30, 0x7FC00000]> : tensor<12xf32>
  %rem_f32_1 = stablehlo.constant dense<[2.0, 2.0, -2.0, -2.0, 0.0, 2.0, 0x7F800000, 1.0, -3.0, 0.5, 3.0, 1.0]> : tensor<12xf32>
  %rem_f32 = stablehlo.remainder %rem_f32_0, %rem_f32_1 : tensor<12xf32>
  %rem_f64_0 = stablehlo.constant dense<[5.5, -5.5, 5.5, -5.5, 1.0, 0x7FF0000000000000, 2.0, -0.0, 0.0, 7.0, 1e+30, 0x7FF8000000000000]> : tensor<12xf64>
  %rem_f64_1 = stablehlo.constant dense<[2.0, 2.0, -2.0, -2.0, 0.0, 2.0, 0x7FF0000000000000, 1.0, -3.0, 0.5, 3.0, 1.0]> : tensor<12xf64>
  %rem_f64 = stablehlo.remainder %rem_f64_0, %rem_f64_1 : tensor<12xf64>
  %rem_i32_0 = stablehlo.constant dense<[7, -7, 7, -7, 5, -2147483648, 0, 2147483647]> : tensor<8xi32>
  %rem_i32_1 = stablehlo.constant dense<[3, 3, -3, -3, 0, -1, 5, 2]> : tensor<8xi32>
  // XLA: x % 0 = x, INT_MIN % -1 = 0; the sign of the dividend
  %rem_i32 = stablehlo.remainder %rem_i32_0, %rem_i32_1 : tensor<8xi32>
  %atan2_f32_0 = stablehlo.constant dense<[1.0, 1.0, -0.0, 0.0, 0.0, -0.0, 0x7F800000, -1.0, 0.5, 0x7FC00000, 0xFF800000, 3.0]> : tensor<12xf32>
  %atan2_f32_1 = stablehlo.constant dense<[1.0, -1.0, -1.0, -0.0, 0.0, 0.0, 0x7F800000, 0.0, -2.0, 1.0, 0xFF800000, 1.0000000031710769e-30]> : tensor<12xf32>
  %atan2_f32 = stablehlo.atan2 %atan2_f32_0, %atan2_f32_1 : tensor<12xf32>
  %atan2_f64_0 = stablehlo.constant dense<[1.0, 1.0, -0.0, 0.0, 0.0, -0.0, 0x7FF0000000000000, -1.0, 0.5, 0x7FF8000000000000, 0xFFF0000000000000, 3.0]> : tensor<12xf64>
  %atan2_f64_1 = stablehlo.constant dense<[1.0, -1.0, -1.0, -0.0, 0.0, 0.0, 0x7FF0000000000000, 0.0, -2.0, 1.0, 0xFFF0000000000000, 1e-30]> : tensor<12xf64>
  %atan2_f64 = stablehlo.atan2 %atan2_f64_0, %atan2_f64_1 : tensor<12xf64>
  %tan_f32_0 = stablehlo.constant dense<[0.0, -0.0, 1.0, -1.0, 1.5, 1.5707963705062866, 100.0, 10000000000.0, 9.999999682655225e-21, 0x7F800000, 0x7FC00000]> : tensor<11xf32>
  %tan_f32 = stablehlo.tan %tan_f32_0 : tensor<11xf32>
  %tan_f64_0 = stablehlo.constant dense<[0.0, -0.0, 1.0, -1.0, 1.5, 1.5707963267948966, 100.0, 10000000000.0, 1e-20, 0x7FF0000000000000, 0x7FF8000000000000]> : tensor<11xf64>
  %tan_f64 = stablehlo.tan %tan_f64_0 : tensor<11xf64>
  %cbrt_f32_0 = stablehlo.constant dense<[27.0, -8.0, 0.0, -0.0, 2.0, 1.0000000031710769e-30, -1.0000000150474662e+30, 0x7F800000, 0xFF800000, 0x7FC00000, 0.0010000000474974513]> : tensor<11xf32>
  %cbrt_f32 = stablehlo.cbrt %cbrt_f32_0 : tensor<11xf32>
  %cbrt_f64_0 = stablehlo.constant dense<[27.0, -8.0, 0.0, -0.0, 2.0, 1e-30, -1e+30, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0.001]> : tensor<11xf64>
  %cbrt_f64 = stablehlo.cbrt %cbrt_f64_0 : tensor<11xf64>
  %shl_i32_0 = stablehlo.constant dense<[1, 1, 1, -8, -8, 8, -2147483648, 12345, 3, 5]> : tensor<10xi32>
  %shl_i32_1 = stablehlo.constant dense<[3, 31, 32, 1, 28, 40, 1, -1, 0, 33]> : tensor<10xi32>
  // a count outside [0, 32) gives 0 (>> arithmetic: the sign's fill)
  %shl_i32 = stablehlo.shift_left %shl_i32_0, %shl_i32_1 : tensor<10xi32>
  %shra_i32_0 = stablehlo.constant dense<[1, 1, 1, -8, -8, 8, -2147483648, 12345, 3, 5]> : tensor<10xi32>
  %shra_i32_1 = stablehlo.constant dense<[3, 31, 32, 1, 28, 40, 1, -1, 0, 33]> : tensor<10xi32>
  %shra_i32 = stablehlo.shift_right_arithmetic %shra_i32_0, %shra_i32_1 : tensor<10xi32>
  %shrl_i32_0 = stablehlo.constant dense<[1, 1, 1, -8, -8, 8, -2147483648, 12345, 3, 5]> : tensor<10xi32>
  %shrl_i32_1 = stablehlo.constant dense<[3, 31, 32, 1, 28, 40, 1, -1, 0, 33]> : tensor<10xi32>
  %shrl_i32 = stablehlo.shift_right_logical %shrl_i32_0, %shrl_i32_1 : tensor<10xi32>
  %shl_ui8_0 = stablehlo.constant dense<[200, 200, 200, 1, 255, 128]> : tensor<6xui8>
  %shl_ui8_1 = stablehlo.constant dense<[1, 7, 8, 7, 4, 200]> : tensor<6xui8>
  %shl_ui8 = stablehlo.shift_left %shl_ui8_0, %shl_ui8_1 : tensor<6xui8>
  %shra_ui8_0 = stablehlo.constant dense<[200, 200, 200, 1, 255, 128]> : tensor<6xui8>
  %shra_ui8_1 = stablehlo.constant dense<[1, 7, 8, 7, 4, 200]> : tensor<6xui8>
  // unsigned: the top bit of the width is the sign, as APInt's ashr
  %shra_ui8 = stablehlo.shift_right_arithmetic %shra_ui8_0, %shra_ui8_1 : tensor<6xui8>
  %shrl_ui8_0 = stablehlo.constant dense<[200, 200, 200, 1, 255, 128]> : tensor<6xui8>
  %shrl_ui8_1 = stablehlo.constant dense<[1, 7, 8, 7, 4, 200]> : tensor<6xui8>
  %shrl_ui8 = stablehlo.shift_right_logical %shrl_ui8_0, %shrl_ui8_1 : tensor<6xui8>
  %shl_i64_0 = stablehlo.constant dense<[1, -1, -9223372036854775808, 6]> : tensor<4xi64>
  %shl_i64_1 = stablehlo.constant dense<[63, 63, 63, 64]> : tensor<4xi64>
  %shl_i64 = stablehlo.shift_left %shl_i64_0, %shl_i64_1 : tensor<4xi64>
  %shra_i64_0 = stablehlo.constant dense<[1, -1, -9223372036854775808, 6]> : tensor<4xi64>
  %shra_i64_1 = stablehlo.constant dense<[63, 63, 63, 64]> : tensor<4xi64>
  %shra_i64 = stablehlo.shift_right_arithmetic %shra_i64_0, %shra_i64_1 : tensor<4xi64>
  %shrl_i64_0 = stablehlo.constant dense<[1, -1, -9223372036854775808, 6]> : tensor<4xi64>
  %shrl_i64_1 = stablehlo.constant dense<[63, 63, 63, 64]> : tensor<4xi64>
  %shrl_i64 = stablehlo.shift_right_logical %shrl_i64_0, %shrl_i64_1 : tensor<4xi64>
  %popcnt_i32_0 = stablehlo.constant dense<[0, 1, -1, 255, -2147483648, 2147483647, 256, 7]> : tensor<8xi32>
  %popcnt_i32 = stablehlo.popcnt %popcnt_i32_0 : tensor<8xi32>
  %clz_i32_0 = stablehlo.constant dense<[0, 1, -1, 255, -2147483648, 2147483647, 256, 7]> : tensor<8xi32>
  %clz_i32 = stablehlo.count_leading_zeros %clz_i32_0 : tensor<8xi32>
  %popcnt_i8_0 = stablehlo.constant dense<[0, 1, -1, 127, -128, 16]> : tensor<6xi8>
  %popcnt_i8 = stablehlo.popcnt %popcnt_i8_0 : tensor<6xi8>
  %clz_i8_0 = stablehlo.constant dense<[0, 1, -1, 127, -128, 16]> : tensor<6xi8>
  %clz_i8 = stablehlo.count_leading_zeros %clz_i8_0 : tensor<6xi8>
  %clz_i64_0 = stablehlo.constant dense<[0, 1, -1, 4294967296]> : tensor<4xi64>
  %clz_i64 = stablehlo.count_leading_zeros %clz_i64_0 : tensor<4xi64>
  return %rem_f32, %rem_f64, %rem_i32, %atan2_f32, %atan2_f64, %tan_f32, %tan_f64, %cbrt_f32, %cbrt_f64, %shl_i32, %shra_i32, %shrl_i32, %shl_ui8, %shra_ui8, %shrl_ui8, %shl_i64, %shra_i64, %shrl_i64, %popcnt_i32, %clz_i32, %popcnt_i8, %clz_i8, %clz_i64 : tensor<12xf32>, tensor<12xf64>, tensor<8xi32>, tensor<12xf32>, tensor<12xf64>, tensor<11xf32>, tensor<11xf64>, tensor<11xf32>, tensor<11xf64>, tensor<10xi32>, tensor<10xi32>, tensor<10xi32>, tensor<6xui8>, tensor<6xui8>, tensor<6xui8>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<8xi32>, tensor<8xi32>, tensor<6xi8>, tensor<6xi8>, tensor<4xi64>
}
