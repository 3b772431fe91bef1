module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<14xf32>, %arg1: tensor<14xf32>) -> (tensor<14xf32> {jax.result_info = "result[0]"}, tensor<14xf32> {jax.result_info = "result[1]"}, tensor<14xf32> {jax.result_info = "result[2]"}, tensor<14xf32> {jax.result_info = "result[3]"}, tensor<14xf32> {jax.result_info = "result[4]"}, tensor<14xf32> {jax.result_info = "result[5]"}, tensor<14xf32> {jax.result_info = "result[6]"}, tensor<14xf32> {jax.result_info = "result[7]"}, tensor<14xf32> {jax.result_info = "result[8]"}, tensor<14xf32> {jax.result_info = "result[9]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<14xf32>
    %1 = stablehlo.subtract %arg0, %arg1 : tensor<14xf32>
    %2 = stablehlo.multiply %arg0, %arg1 : tensor<14xf32>
    %3 = stablehlo.divide %arg0, %arg1 : tensor<14xf32>
    %4 = stablehlo.remainder %arg0, %arg1 : tensor<14xf32>
    %5 = stablehlo.maximum %arg0, %arg1 : tensor<14xf32>
    %6 = stablehlo.minimum %arg0, %arg1 : tensor<14xf32>
    %7 = stablehlo.atan2 %arg0, %arg1 : tensor<14xf32>
    %8 = stablehlo.power %arg0, %arg1 : tensor<14xf32>
    %9 = chlo.next_after %arg0, %arg1 : tensor<14xf32>, tensor<14xf32> -> tensor<14xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>
  }
}
