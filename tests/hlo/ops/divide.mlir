// divide: StableHLO spec "divide": floats are IEEE-754 division, integers
// the algebraic quotient with the fraction discarded (toward zero).
// The spec leaves integer division by zero and INT_MIN / -1 to the
// implementation ("Errors": integer overflows are implementation-defined);
// carve follows XLA: x / 0 is -1 (all bits set; 255 for ui8) and
// INT_MIN / -1 is INT_MIN. Neither may trap (SIGFPE).
func.func public @main() -> (tensor<8xf32> {jax.result_info = "f32"}, tensor<8xi32> {jax.result_info = "i32"},
                             tensor<3xi32> {jax.result_info = "i32_edges"}, tensor<2xi64> {jax.result_info = "i64_edges"},
                             tensor<2xi8> {jax.result_info = "i8_edges"}, tensor<2xui8> {jax.result_info = "ui8"},
                             tensor<2xf64> {jax.result_info = "f64"}) {
  // IEEE-754: 1/0 = inf, -1/0 = -inf, 1/-0 = -inf, 0/0 = NaN, inf/inf = NaN,
  // NaN/1 = NaN, -1/inf = -0; 7/2 = 3.5 exactly
  %a = stablehlo.constant dense<[1.0, -1.0, 1.0, 0.0, 0x7F800000, 0x7FC00000, -1.0, 7.0]> : tensor<8xf32>
  %b = stablehlo.constant dense<[0.0, 0.0, -0.0, 0.0, 0x7F800000, 1.0, 0x7F800000, 2.0]> : tensor<8xf32>
  %f = stablehlo.divide %a, %b : tensor<8xf32>
  // toward zero: 7/2 = 3, -7/2 = -3, 7/-2 = -3, -7/-2 = 3, 1/3 = 0, -1/3 = 0, 0/5 = 0, 6/3 = 2
  %c = stablehlo.constant dense<[7, -7, 7, -7, 1, -1, 0, 6]> : tensor<8xi32>
  %d = stablehlo.constant dense<[2, 2, -2, -2, 3, 3, 5, 3]> : tensor<8xi32>
  %i = stablehlo.divide %c, %d : tensor<8xi32>
  // implementation-defined (XLA's choice): 5/0 = -1, -5/0 = -1, INT32_MIN/-1 = INT32_MIN
  %e = stablehlo.constant dense<[5, -5, -2147483648]> : tensor<3xi32>
  %g = stablehlo.constant dense<[0, 0, -1]> : tensor<3xi32>
  %j = stablehlo.divide %e, %g : tensor<3xi32>
  %k = stablehlo.constant dense<[-9223372036854775808, 9]> : tensor<2xi64>
  %l = stablehlo.constant dense<[-1, 0]> : tensor<2xi64>
  %m = stablehlo.divide %k, %l : tensor<2xi64>
  // i8: -128 / -1 = -128 (overflow, as above); -128 / 2 = -64
  %n = stablehlo.constant dense<[-128, -128]> : tensor<2xi8>
  %o = stablehlo.constant dense<[-1, 2]> : tensor<2xi8>
  %p = stablehlo.divide %n, %o : tensor<2xi8>
  // ui8: 200 / 7 = 28; 200 / 0 = 255 (all bits set)
  %q = stablehlo.constant dense<[200, 200]> : tensor<2xui8>
  %r = stablehlo.constant dense<[7, 0]> : tensor<2xui8>
  %s = stablehlo.divide %q, %r : tensor<2xui8>
  // f64: 1/3 correctly rounded; -0/5 = -0
  %t = stablehlo.constant dense<[1.0, -0.0]> : tensor<2xf64>
  %u = stablehlo.constant dense<[3.0, 5.0]> : tensor<2xf64>
  %v = stablehlo.divide %t, %u : tensor<2xf64>
  return %f, %i, %j, %m, %p, %s, %v : tensor<8xf32>, tensor<8xi32>, tensor<3xi32>, tensor<2xi64>, tensor<2xi8>, tensor<2xui8>, tensor<2xf64>
}
