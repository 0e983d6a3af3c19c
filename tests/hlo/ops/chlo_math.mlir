// CHLO's sinh, cosh, atan, asin, acos, asinh, acosh, atanh, erfc (what
// jnp.sinh, jnp.arcsin, ... lower to), which carve writes with its own
// elementwise ops (erfc is one: libm's): against Python's math (an independent libm), within 8
// ulps in f64 and 2 in f32, at 0, near 0, at the ends of the domains
// (asin(1), acos(-1), acosh(1)) and at large arguments.
func.func public @main() -> (tensor<7xf64> {jax.result_info = "sinh_f64"}, tensor<7xf32> {jax.result_info = "sinh_f32"}, tensor<6xf64> {jax.result_info = "cosh_f64"}, tensor<6xf32> {jax.result_info = "cosh_f32"}, tensor<7xf64> {jax.result_info = "atan_f64"}, tensor<7xf32> {jax.result_info = "atan_f32"}, tensor<7xf64> {jax.result_info = "asin_f64"}, tensor<7xf32> {jax.result_info = "asin_f32"}, tensor<7xf64> {jax.result_info = "acos_f64"}, tensor<7xf32> {jax.result_info = "acos_f32"}, tensor<7xf64> {jax.result_info = "asinh_f64"}, tensor<7xf32> {jax.result_info = "asinh_f32"}, tensor<6xf64> {jax.result_info = "acosh_f64"}, tensor<6xf32> {jax.result_info = "acosh_f32"}, tensor<6xf64> {jax.result_info = "atanh_f64"}, tensor<6xf32> {jax.result_info = "atanh_f32"}, tensor<6xf64> {jax.result_info = "erfc_f64"}, tensor<6xf32> {jax.result_info = "erfc_f32"}) {
  %sinh_f64_x = stablehlo.constant dense<[-3.0, -0.5, -1e-08, 0.0, 1e-05, 0.75, 2.5]> : tensor<7xf64>
  %sinh_f64 = chlo.sinh %sinh_f64_x : tensor<7xf64> -> tensor<7xf64>
  %sinh_f32_x = stablehlo.constant dense<[-3.0, -0.5, -9.99999993922529e-09, 0.0, 9.999999747378752e-06, 0.75, 2.5]> : tensor<7xf32>
  %sinh_f32 = chlo.sinh %sinh_f32_x : tensor<7xf32> -> tensor<7xf32>
  %cosh_f64_x = stablehlo.constant dense<[-3.0, -0.5, 0.0, 0.0001, 0.75, 2.5]> : tensor<6xf64>
  %cosh_f64 = chlo.cosh %cosh_f64_x : tensor<6xf64> -> tensor<6xf64>
  %cosh_f32_x = stablehlo.constant dense<[-3.0, -0.5, 0.0, 9.999999747378752e-05, 0.75, 2.5]> : tensor<6xf32>
  %cosh_f32 = chlo.cosh %cosh_f32_x : tensor<6xf32> -> tensor<6xf32>
  %atan_f64_x = stablehlo.constant dense<[-1000000.0, -2.0, -1e-07, 0.0, 0.5, 1.0, 30.0]> : tensor<7xf64>
  %atan_f64 = chlo.atan %atan_f64_x : tensor<7xf64> -> tensor<7xf64>
  %atan_f32_x = stablehlo.constant dense<[-1000000.0, -2.0, -1.0000000116860974e-07, 0.0, 0.5, 1.0, 30.0]> : tensor<7xf32>
  %atan_f32 = chlo.atan %atan_f32_x : tensor<7xf32> -> tensor<7xf32>
  %asin_f64_x = stablehlo.constant dense<[-1.0, -0.7, -1e-08, 0.0, 0.3, 0.999, 1.0]> : tensor<7xf64>
  %asin_f64 = chlo.asin %asin_f64_x : tensor<7xf64> -> tensor<7xf64>
  %asin_f32_x = stablehlo.constant dense<[-1.0, -0.699999988079071, -9.99999993922529e-09, 0.0, 0.30000001192092896, 0.9990000128746033, 1.0]> : tensor<7xf32>
  %asin_f32 = chlo.asin %asin_f32_x : tensor<7xf32> -> tensor<7xf32>
  %acos_f64_x = stablehlo.constant dense<[-1.0, -0.7, 0.0, 1e-08, 0.3, 0.999, 1.0]> : tensor<7xf64>
  %acos_f64 = chlo.acos %acos_f64_x : tensor<7xf64> -> tensor<7xf64>
  %acos_f32_x = stablehlo.constant dense<[-1.0, -0.699999988079071, 0.0, 9.99999993922529e-09, 0.30000001192092896, 0.9990000128746033, 1.0]> : tensor<7xf32>
  %acos_f32 = chlo.acos %acos_f32_x : tensor<7xf32> -> tensor<7xf32>
  %asinh_f64_x = stablehlo.constant dense<[-100000.0, -2.0, -1e-08, 0.0, 0.5, 3.0, 100000.0]> : tensor<7xf64>
  %asinh_f64 = chlo.asinh %asinh_f64_x : tensor<7xf64> -> tensor<7xf64>
  %asinh_f32_x = stablehlo.constant dense<[-100000.0, -2.0, -9.99999993922529e-09, 0.0, 0.5, 3.0, 100000.0]> : tensor<7xf32>
  %asinh_f32 = chlo.asinh %asinh_f32_x : tensor<7xf32> -> tensor<7xf32>
  %acosh_f64_x = stablehlo.constant dense<[1.0, 1.0001, 1.5, 2.0, 10.0, 100000.0]> : tensor<6xf64>
  %acosh_f64 = chlo.acosh %acosh_f64_x : tensor<6xf64> -> tensor<6xf64>
  %acosh_f32_x = stablehlo.constant dense<[1.0, 1.000100016593933, 1.5, 2.0, 10.0, 100000.0]> : tensor<6xf32>
  %acosh_f32 = chlo.acosh %acosh_f32_x : tensor<6xf32> -> tensor<6xf32>
  %atanh_f64_x = stablehlo.constant dense<[-0.99, -0.5, -1e-08, 0.0, 0.3, 0.9]> : tensor<6xf64>
  %atanh_f64 = chlo.atanh %atanh_f64_x : tensor<6xf64> -> tensor<6xf64>
  %atanh_f32_x = stablehlo.constant dense<[-0.9900000095367432, -0.5, -9.99999993922529e-09, 0.0, 0.30000001192092896, 0.8999999761581421]> : tensor<6xf32>
  %atanh_f32 = chlo.atanh %atanh_f32_x : tensor<6xf32> -> tensor<6xf32>
  %erfc_f64_x = stablehlo.constant dense<[-2.0, -0.5, 0.0, 0.5, 1.0, 2.5]> : tensor<6xf64>
  %erfc_f64 = chlo.erfc %erfc_f64_x : tensor<6xf64> -> tensor<6xf64>
  %erfc_f32_x = stablehlo.constant dense<[-2.0, -0.5, 0.0, 0.5, 1.0, 2.5]> : tensor<6xf32>
  %erfc_f32 = chlo.erfc %erfc_f32_x : tensor<6xf32> -> tensor<6xf32>
  return %sinh_f64, %sinh_f32, %cosh_f64, %cosh_f32, %atan_f64, %atan_f32, %asin_f64, %asin_f32, %acos_f64, %acos_f32, %asinh_f64, %asinh_f32, %acosh_f64, %acosh_f32, %atanh_f64, %atanh_f32, %erfc_f64, %erfc_f32 : tensor<7xf64>, tensor<7xf32>, tensor<6xf64>, tensor<6xf32>, tensor<7xf64>, tensor<7xf32>, tensor<7xf64>, tensor<7xf32>, tensor<7xf64>, tensor<7xf32>, tensor<7xf64>, tensor<7xf32>, tensor<6xf64>, tensor<6xf32>, tensor<6xf64>, tensor<6xf32>, tensor<6xf64>, tensor<6xf32>
}
