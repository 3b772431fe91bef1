module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf64>) -> (tensor<8xf32> {jax.result_info = "result[0]"}, tensor<8xbf16> {jax.result_info = "result[1]"}, tensor<8xf16> {jax.result_info = "result[2]"}, tensor<8xi64> {jax.result_info = "result[3]"}, tensor<8xui64> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<8xf64>) -> tensor<8xf32>
    %1 = stablehlo.convert %arg0 : (tensor<8xf64>) -> tensor<8xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<8xf64>) -> tensor<8xf16>
    %3 = stablehlo.convert %arg0 : (tensor<8xf64>) -> tensor<8xi64>
    %4 = stablehlo.convert %arg0 : (tensor<8xf64>) -> tensor<8xui64>
    return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xbf16>, tensor<8xf16>, tensor<8xi64>, tensor<8xui64>
  }
}
