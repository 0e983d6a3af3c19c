// add, subtract, multiply, negate: StableHLO spec "add", "subtract",
// "multiply", "negate": IEEE-754 addition, subtraction, multiplication and
// negation for floats (results rounded to nearest even, "Floating-point
// exceptions": default results, no trap); for integers the spec leaves
// overflow to the implementation ("Errors"), and carve wraps (two's
// complement), as XLA does. bf16 values are computed and rounded once to bf16.
func.func public @main() -> (tensor<6xf32> {jax.result_info = "add_f32"}, tensor<4xf32> {jax.result_info = "sub_f32"},
                             tensor<4xf32> {jax.result_info = "mul_f32"}, tensor<4xf32> {jax.result_info = "neg_f32"},
                             tensor<3xi32> {jax.result_info = "add_i32"}, tensor<3xi32> {jax.result_info = "mul_i32"},
                             tensor<3xi32> {jax.result_info = "neg_i32"}, tensor<2xui8> {jax.result_info = "add_ui8"},
                             tensor<3xbf16> {jax.result_info = "add_bf16"}, tensor<2xi8> {jax.result_info = "sub_i8"}) {
  // 0.1 + 0.2 = 0.300000012 (f32: 0x3E99999A); -0 + -0 = -0; -0 + +0 = +0
  // (round to nearest: an exact zero sum is +0 unless both are -0);
  // inf + -inf = NaN; NaN + 1 = NaN; 16777216 + 1 = 16777216 (tie to even)
  %a = stablehlo.constant dense<[0.1, -0.0, -0.0, 0x7F800000, 0x7FC00000, 16777216.0]> : tensor<6xf32>
  %b = stablehlo.constant dense<[0.2, -0.0, 0.0, 0xFF800000, 1.0, 1.0]> : tensor<6xf32>
  %add = stablehlo.add %a, %b : tensor<6xf32>
  // 1 - 1 = +0; -0 - 0 = -0; inf - inf = NaN; 3 - 0.5 = 2.5
  %c = stablehlo.constant dense<[1.0, -0.0, 0x7F800000, 3.0]> : tensor<4xf32>
  %d = stablehlo.constant dense<[1.0, 0.0, 0x7F800000, 0.5]> : tensor<4xf32>
  %sub = stablehlo.subtract %c, %d : tensor<4xf32>
  // 0 * inf = NaN; -2 * 0 = -0; 1e30 * 1e30 = inf (overflow); 3 * -1.5 = -4.5
  %e = stablehlo.constant dense<[0.0, -2.0, 1.0e30, 3.0]> : tensor<4xf32>
  %f = stablehlo.constant dense<[0x7F800000, 0.0, 1.0e30, -1.5]> : tensor<4xf32>
  %mul = stablehlo.multiply %e, %f : tensor<4xf32>
  // -(0) = -0; -(-0) = +0; -(inf) = -inf; -(2.5) = -2.5
  %g = stablehlo.constant dense<[0.0, -0.0, 0x7F800000, 2.5]> : tensor<4xf32>
  %neg = stablehlo.negate %g : tensor<4xf32>
  // INT32_MAX + 1 wraps to INT32_MIN; -5 + 3 = -2; INT32_MIN + -1 wraps to INT32_MAX
  %h = stablehlo.constant dense<[2147483647, -5, -2147483648]> : tensor<3xi32>
  %i = stablehlo.constant dense<[1, 3, -1]> : tensor<3xi32>
  %addi = stablehlo.add %h, %i : tensor<3xi32>
  // 65536 * 65536 = 2^32 wraps to 0; 46341 * 46341 = 2147488281 wraps to -2147479015; -6 * 7 = -42
  %j = stablehlo.constant dense<[65536, 46341, -6]> : tensor<3xi32>
  %k = stablehlo.constant dense<[65536, 46341, 7]> : tensor<3xi32>
  %muli = stablehlo.multiply %j, %k : tensor<3xi32>
  // -(INT32_MIN) wraps to INT32_MIN; -(5) = -5; -(0) = 0
  %l = stablehlo.constant dense<[-2147483648, 5, 0]> : tensor<3xi32>
  %negi = stablehlo.negate %l : tensor<3xi32>
  // ui8: 200 + 100 = 300 wraps to 44; 255 + 1 wraps to 0
  %m = stablehlo.constant dense<[200, 255]> : tensor<2xui8>
  %n = stablehlo.constant dense<[100, 1]> : tensor<2xui8>
  %addu = stablehlo.add %m, %n : tensor<2xui8>
  // bf16 (8 significant bits): 1 + 2^-8 is a tie between 1 and 1 + 2^-7,
  // rounds to even: 1; 1 + 3*2^-8 rounds to even: 1 + 2^-6 = 1.015625;
  // 256 + 1 = 257 is a tie between 256 and 258: 256
  %o = stablehlo.constant dense<[1.0, 1.0, 256.0]> : tensor<3xbf16>
  %p = stablehlo.constant dense<[0.00390625, 0.01171875, 1.0]> : tensor<3xbf16>
  %addb = stablehlo.add %o, %p : tensor<3xbf16>
  // i8: -128 - 1 wraps to 127; 100 - (-100) = 200 wraps to -56
  %q = stablehlo.constant dense<[-128, 100]> : tensor<2xi8>
  %r = stablehlo.constant dense<[1, -100]> : tensor<2xi8>
  %subi = stablehlo.subtract %q, %r : tensor<2xi8>
  return %add, %sub, %mul, %neg, %addi, %muli, %negi, %addu, %addb, %subi : tensor<6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<2xui8>, tensor<3xbf16>, tensor<2xi8>
}
