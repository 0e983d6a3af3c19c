// not, and, or, xor: StableHLO spec "not", "and", "or", "xor": logical for
// booleans, bitwise for integers (two's complement: not(x) = -x - 1 for
// signed integers, 255 - x for ui8).
func.func public @main() -> (tensor<2xi1> {jax.result_info = "not_i1"}, tensor<4xi1> {jax.result_info = "and_i1"},
                             tensor<4xi1> {jax.result_info = "or_i1"}, tensor<4xi1> {jax.result_info = "xor_i1"},
                             tensor<4xi32> {jax.result_info = "not_i32"}, tensor<3xi32> {jax.result_info = "and_i32"},
                             tensor<3xi32> {jax.result_info = "or_i32"}, tensor<3xi32> {jax.result_info = "xor_i32"},
                             tensor<3xui8> {jax.result_info = "not_ui8"}, tensor<2xi8> {jax.result_info = "xor_i8"},
                             tensor<2xi64> {jax.result_info = "and_i64"}) {
  %t = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %nb = stablehlo.not %t : tensor<2xi1>
  // truth tables over (F, F), (F, T), (T, F), (T, T)
  %p = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>
  %q = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>
  %ab = stablehlo.and %p, %q : tensor<4xi1>
  %ob = stablehlo.or %p, %q : tensor<4xi1>
  %xb = stablehlo.xor %p, %q : tensor<4xi1>
  // not: 5 -> -6, 0 -> -1, -1 -> 0, INT32_MIN -> INT32_MAX
  %a = stablehlo.constant dense<[5, 0, -1, -2147483648]> : tensor<4xi32>
  %ni = stablehlo.not %a : tensor<4xi32>
  // 12 = 0b1100, 10 = 0b1010: and 8, or 14, xor 6; -1 & 255 = 255, -1 | 0 = -1, -1 ^ 255 = -256;
  // INT32_MIN & -1 = INT32_MIN, | 1 = -2147483647, ^ INT32_MAX = -1
  %b = stablehlo.constant dense<[12, -1, -2147483648]> : tensor<3xi32>
  %c = stablehlo.constant dense<[10, 255, -1]> : tensor<3xi32>
  %ai = stablehlo.and %b, %c : tensor<3xi32>
  %d = stablehlo.constant dense<[10, 0, 1]> : tensor<3xi32>
  %oi = stablehlo.or %b, %d : tensor<3xi32>
  %e = stablehlo.constant dense<[10, 255, 2147483647]> : tensor<3xi32>
  %xi = stablehlo.xor %b, %e : tensor<3xi32>
  // ui8: not 0 = 255, not 255 = 0, not 170 = 85
  %f = stablehlo.constant dense<[0, 255, 170]> : tensor<3xui8>
  %nu = stablehlo.not %f : tensor<3xui8>
  // i8: -128 ^ 127 = -1, 85 ^ -86 = -1
  %g = stablehlo.constant dense<[-128, 85]> : tensor<2xi8>
  %h = stablehlo.constant dense<[127, -86]> : tensor<2xi8>
  %x8 = stablehlo.xor %g, %h : tensor<2xi8>
  // i64: bits above 32 are kept: (2^40 + 5) & (2^40 + 3) = 2^40 + 1; -1 & INT64_MIN = INT64_MIN
  %i = stablehlo.constant dense<[1099511627781, -1]> : tensor<2xi64>
  %j = stablehlo.constant dense<[1099511627779, -9223372036854775808]> : tensor<2xi64>
  %al = stablehlo.and %i, %j : tensor<2xi64>
  return %nb, %ab, %ob, %xb, %ni, %ai, %oi, %xi, %nu, %x8, %al : tensor<2xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xui8>, tensor<2xi8>, tensor<2xi64>
}
