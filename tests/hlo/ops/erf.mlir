// chlo.erf: the error function (CHLO, as JAX's own lowering writes erf and
// the exact GELU, jax.nn.gelu(x, approximate=False)); carve reads it as its
// erf op. erf(+-0) = +-0, erf(+-inf) = +-1, NaN stays NaN; other values are
// the exact function (Python's math.erf) rounded to the type, within 1 ulp.
// The GELU line is x * 0.5 * (1 + erf(x / sqrt(2))) in f64.
func.func public @main() -> (tensor<11xf32> {jax.result_info = "erf_f32"}, tensor<11xf64> {jax.result_info = "erf_f64"},
                             tensor<5xf64> {jax.result_info = "gelu_f64"}) {
  %a = stablehlo.constant dense<[0.0, -0.0, 1e-10, 0.5, 1.0, -2.0, 3.5, 6.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<11xf32>
  %erf32 = chlo.erf %a : tensor<11xf32> -> tensor<11xf32>
  %b = stablehlo.constant dense<[0.0, -0.0, 1e-10, 0.5, 1.0, -2.0, 3.5, 6.0, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000]> : tensor<11xf64>
  %erf64 = chlo.erf %b : tensor<11xf64> -> tensor<11xf64>
  %x = stablehlo.constant dense<[-3.0, -0.5, 0.0, 0.7, 2.0]> : tensor<5xf64>
  %r2 = stablehlo.constant dense<0.70710678118654757> : tensor<5xf64>
  %half = stablehlo.constant dense<0.5> : tensor<5xf64>
  %one = stablehlo.constant dense<1.0> : tensor<5xf64>
  %s = stablehlo.multiply %x, %r2 : tensor<5xf64>
  %e = chlo.erf %s : tensor<5xf64> -> tensor<5xf64>
  %p = stablehlo.add %one, %e : tensor<5xf64>
  %h = stablehlo.multiply %x, %half : tensor<5xf64>
  %gelu = stablehlo.multiply %h, %p : tensor<5xf64>
  return %erf32, %erf64, %gelu : tensor<11xf32>, tensor<11xf64>, tensor<5xf64>
}
