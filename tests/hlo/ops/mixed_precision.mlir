// dot_general and convolution with a wider result type than their
// operands (JAX's preferred_element_type: bf16 operands accumulated in
// f32, i8 in i32): the operands are widened first (exactly), so the sums
// are the wide type's. 1 + 2^-9 + 2^-9 is 1.00390625 in f32 (bf16 would
// round it to 1.0); 100 * 100 + 100 * 1 = 10100 overflows i8 but not i32.
func.func public @main() -> (tensor<1x1xf32> {jax.result_info = "bf16_dot_f32"}, tensor<2xi32> {jax.result_info = "i8_dot_i32"},
                             tensor<1x2x1xf32> {jax.result_info = "bf16_conv_f32"}, tensor<2x2xf64> {jax.result_info = "f32_dot_f64"}) {
  %a = stablehlo.constant dense<[[1.0, 0.001953125, 0.001953125]]> : tensor<1x3xbf16>
  %b = stablehlo.constant dense<[[1.0], [1.0], [1.0]]> : tensor<3x1xbf16>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<1x3xbf16>, tensor<3x1xbf16>) -> tensor<1x1xf32>
  %i = stablehlo.constant dense<[[100, 100], [-100, 7]]> : tensor<2x2xi8>
  %j = stablehlo.constant dense<[100, 1]> : tensor<2xi8>
  %k = stablehlo.dot_general %i, %j, contracting_dims = [1] x [0] : (tensor<2x2xi8>, tensor<2xi8>) -> tensor<2xi32>
  // a 1D convolution, window 2, over [1, 2^-9, 2^-9]: 1 + 2^-9 and 2^-9 + 2^-9
  %x = stablehlo.constant dense<[[[1.0], [0.001953125], [0.001953125]]]> : tensor<1x3x1xbf16>
  %w = stablehlo.constant dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xbf16>
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x1xbf16>, tensor<2x1x1xbf16>) -> tensor<1x2x1xf32>
  %p = stablehlo.constant dense<[[16777216.0, 1.0], [1.0, 0.0]]> : tensor<2x2xf32>
  %q = stablehlo.constant dense<[[1.0, 0.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %r = stablehlo.dot_general %p, %q, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf64>
  return %d, %k, %c, %r : tensor<1x1xf32>, tensor<2xi32>, tensor<1x2x1xf32>, tensor<2x2xf64>
}
