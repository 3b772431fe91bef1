module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<23xf32>) -> (tensor<23xi32> {jax.result_info = "result[0]"}, tensor<23xui8> {jax.result_info = "result[1]"}, tensor<23xi8> {jax.result_info = "result[2]"}, tensor<23xui32> {jax.result_info = "result[3]"}, tensor<23xi64> {jax.result_info = "result[4]"}, tensor<23xui64> {jax.result_info = "result[5]"}, tensor<23xi1> {jax.result_info = "result[6]"}, tensor<23xf16> {jax.result_info = "result[7]"}, tensor<23xbf16> {jax.result_info = "result[8]"}, tensor<23xf8E4M3FN> {jax.result_info = "result[9]"}, tensor<23xf8E5M2> {jax.result_info = "result[10]"}, tensor<23xf64> {jax.result_info = "result[11]"}, tensor<23xi16> {jax.result_info = "result[12]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xi32>
    %1 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xui8>
    %2 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xi8>
    %3 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xui32>
    %4 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xi64>
    %5 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xui64>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<23xf32>
    %7 = stablehlo.compare NE, %arg0, %6, FLOAT : (tensor<23xf32>, tensor<23xf32>) -> tensor<23xi1>
    %8 = stablehlo.convert %7 : tensor<23xi1>
    %9 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xf16>
    %10 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xbf16>
    %11 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xf8E4M3FN>
    %12 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xf8E5M2>
    %13 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xf64>
    %14 = stablehlo.convert %arg0 : (tensor<23xf32>) -> tensor<23xi16>
    return %0, %1, %2, %3, %4, %5, %8, %9, %10, %11, %12, %13, %14 : tensor<23xi32>, tensor<23xui8>, tensor<23xi8>, tensor<23xui32>, tensor<23xi64>, tensor<23xui64>, tensor<23xi1>, tensor<23xf16>, tensor<23xbf16>, tensor<23xf8E4M3FN>, tensor<23xf8E5M2>, tensor<23xf64>, tensor<23xi16>
  }
}
