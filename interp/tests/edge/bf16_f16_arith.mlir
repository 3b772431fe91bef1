module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xbf16>, %arg1: tensor<6xbf16>, %arg2: tensor<6xf16>, %arg3: tensor<6xf16>) -> (tensor<6xbf16> {jax.result_info = "result[0]"}, tensor<6xbf16> {jax.result_info = "result[1]"}, tensor<6xbf16> {jax.result_info = "result[2]"}, tensor<6xbf16> {jax.result_info = "result[3]"}, tensor<6xf16> {jax.result_info = "result[4]"}, tensor<6xf16> {jax.result_info = "result[5]"}, tensor<6xf16> {jax.result_info = "result[6]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<6xbf16>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<6xbf16>
    %2 = stablehlo.divide %arg0, %arg1 : tensor<6xbf16>
    %3 = stablehlo.maximum %arg0, %arg1 : tensor<6xbf16>
    %4 = stablehlo.add %arg2, %arg3 : tensor<6xf16>
    %5 = stablehlo.multiply %arg2, %arg3 : tensor<6xf16>
    %6 = stablehlo.divide %arg2, %arg3 : tensor<6xf16>
    return %0, %1, %2, %3, %4, %5, %6 : tensor<6xbf16>, tensor<6xbf16>, tensor<6xbf16>, tensor<6xbf16>, tensor<6xf16>, tensor<6xf16>, tensor<6xf16>
  }
}
