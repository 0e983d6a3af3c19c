// convert: StableHLO spec "convert". Float to integer truncates the
// fraction (toward zero); any type to i1 is "not zero"; i1 to a number is
// 0 or 1; a value the destination type holds exactly converts exactly;
// otherwise the spec says TBD (#180), and carve rounds to nearest even for
// integer->float and float->float (once, never through an intermediate
// rounding), wraps integer->integer (two's complement, as XLA), and
// saturates float->integer with NaN -> 0.
func.func public @main() -> (tensor<8xi32> {jax.result_info = "f32_to_i32"}, tensor<8xi1> {jax.result_info = "f32_to_i1"},
                             tensor<2xf32> {jax.result_info = "i1_to_f32"}, tensor<8xbf16> {jax.result_info = "f32_to_bf16"},
                             tensor<5xf32> {jax.result_info = "i64_to_f32"}, tensor<5xui8> {jax.result_info = "i32_to_ui8"},
                             tensor<2xi32> {jax.result_info = "ui8_to_i32"}, tensor<3xf16> {jax.result_info = "f32_to_f16"},
                             tensor<2xbf16> {jax.result_info = "i32_to_bf16"}, tensor<2xbf16> {jax.result_info = "f64_to_bf16"},
                             tensor<3xf32> {jax.result_info = "f64_to_f32"}, tensor<4xi8> {jax.result_info = "i32_to_i8"},
                             tensor<3xi32> {jax.result_info = "f32_to_i32_tbd"}) {
  // toward zero: 2.9 -> 2, -2.9 -> -2, -0.5 -> 0, 0.5 -> 0, -0.0 -> 0, 1e9 -> 1000000000,
  // -2147483648.0 -> INT32_MIN (exact), 123.999 -> 123
  %a = stablehlo.constant dense<[2.9, -2.9, -0.5, 0.5, -0.0, 1.0e9, -2147483648.0, 123.999]> : tensor<8xf32>
  %ai = stablehlo.convert %a : (tensor<8xf32>) -> tensor<8xi32>
  // nonzero -> true: 0 -> false, -0 -> false, 0.5 -> true, -2 -> true, NaN -> true,
  // inf -> true, the smallest subnormal 1e-45 -> true, -inf -> true
  %b = stablehlo.constant dense<[0.0, -0.0, 0.5, -2.0, 0x7FC00000, 0x7F800000, 0x00000001, 0xFF800000]> : tensor<8xf32>
  %bb = stablehlo.convert %b : (tensor<8xf32>) -> tensor<8xi1>
  // true -> 1, false -> 0
  %c = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %cf = stablehlo.convert %c : (tensor<2xi1>) -> tensor<2xf32>
  // to bf16, round to nearest even on the 16 dropped bits:
  // 1 + 2^-8 (0x3F808000) is a tie -> 1 (even); 1 + 3*2^-8 (0x3F818000) a tie -> 1 + 2^-6 = 1.015625;
  // 1 + 2^-8 + 2^-23 (0x3F808001) above the tie -> 1 + 2^-7 = 1.0078125; -1 - 2^-8 -> -1;
  // NaN stays NaN, -inf stays -inf; 3.4e38 (0x7F7FC99E, above the largest bf16 3.38953139e38) -> inf;
  // 0x00010000 (a subnormal, exact in bf16: 2^-133 = 9.18354962e-41) stays
  %d = stablehlo.constant dense<[0x3F808000, 0x3F818000, 0x3F808001, 0xBF808000, 0x7FC00000, 0xFF800000, 0x7F7FC99E, 0x00010000]> : tensor<8xf32>
  %db = stablehlo.convert %d : (tensor<8xf32>) -> tensor<8xbf16>
  // i64 -> f32, one rounding to nearest even: 2^24 + 1 = 16777217 is a tie -> 16777216;
  // 2^24 + 3 -> 16777220 (tie, even); 2^60 + 2^36 + 1 is just above the tie between
  // 2^60 and 2^60 + 2^37 -> 2^60 + 2^37 = 1152921642045800448 (through f64 it would
  // round twice and give 2^60); -2^63 exact; 2^63 - 1 -> 2^63 = 9223372036854775808
  %e = stablehlo.constant dense<[16777217, 16777219, 1152921573326323713, -9223372036854775808, 9223372036854775807]> : tensor<5xi64>
  %ef = stablehlo.convert %e : (tensor<5xi64>) -> tensor<5xf32>
  // i32 -> ui8 keeps the low 8 bits (implementation-defined): 255 -> 255, 256 -> 0, -1 -> 255, 300 -> 44, 7 -> 7
  %f = stablehlo.constant dense<[255, 256, -1, 300, 7]> : tensor<5xi32>
  %fu = stablehlo.convert %f : (tensor<5xi32>) -> tensor<5xui8>
  // ui8 -> i32 is exact: 200 -> 200, 255 -> 255 (not -1)
  %g = stablehlo.constant dense<[200, 255]> : tensor<2xui8>
  %gi = stablehlo.convert %g : (tensor<2xui8>) -> tensor<2xi32>
  // f32 -> f16: 65520 rounds to inf (above the largest f16 65504 by half an ulp, tie goes up to even = inf);
  // 2^-24 = 5.96046448e-8 is the smallest f16 subnormal, exact; 1e-8 < 2^-25 -> +0
  %h = stablehlo.constant dense<[65520.0, 5.96046448e-8, 1.0e-8]> : tensor<3xf32>
  %hh = stablehlo.convert %h : (tensor<3xf32>) -> tensor<3xf16>
  // i32 -> bf16, one rounding: 2^24 + 2^16 + 1 = 16842753 is above the tie between 2^24 and
  // 2^24 + 2^17 -> 16908288 (rounding first to f32 gives the tie 2^24 + 2^16, then 2^24: wrong);
  // 2^24 + 2^16 = 16842752 is the tie itself -> 2^24 = 16777216 (even)
  %i = stablehlo.constant dense<[16842753, 16842752]> : tensor<2xi32>
  %ib = stablehlo.convert %i : (tensor<2xi32>) -> tensor<2xbf16>
  // f64 -> bf16, one rounding: 1 + 2^-8 + 2^-40 is above the tie -> 1.0078125
  // (through f32 the 2^-40 is lost and the tie rounds to 1); 1 + 2^-8 exactly -> 1
  %j = stablehlo.constant dense<[1.0039062500009095, 1.00390625]> : tensor<2xf64>
  %jb = stablehlo.convert %j : (tensor<2xf64>) -> tensor<2xbf16>
  // f64 -> f32: 0.1 -> 0.100000001 (nearest f32); 1e-40 -> the f32 subnormal 9.99994610e-41;
  // 1e39 -> inf (above the largest f32)
  %k = stablehlo.constant dense<[0.1, 1.0e-40, 1.0e39]> : tensor<3xf64>
  %kf = stablehlo.convert %k : (tensor<3xf64>) -> tensor<3xf32>
  // i32 -> i8 keeps the low 8 bits: 128 -> -128, 255 -> -1, -129 -> 127, 100 -> 100
  %l = stablehlo.constant dense<[128, 255, -129, 100]> : tensor<4xi32>
  %li = stablehlo.convert %l : (tensor<4xi32>) -> tensor<4xi8>
  // outside i32 (spec: TBD): carve saturates, NaN -> 0: 3e9 -> INT32_MAX, -inf -> INT32_MIN, NaN -> 0
  %m = stablehlo.constant dense<[3.0e9, 0xFF800000, 0x7FC00000]> : tensor<3xf32>
  %mi = stablehlo.convert %m : (tensor<3xf32>) -> tensor<3xi32>
  return %ai, %bb, %cf, %db, %ef, %fu, %gi, %hh, %ib, %jb, %kf, %li, %mi : tensor<8xi32>, tensor<8xi1>, tensor<2xf32>, tensor<8xbf16>, tensor<5xf32>, tensor<5xui8>, tensor<2xi32>, tensor<3xf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<3xf32>, tensor<4xi8>, tensor<3xi32>
}
