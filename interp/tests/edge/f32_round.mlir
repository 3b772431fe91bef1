module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<14xf32>) -> (tensor<14xf32> {jax.result_info = "result[0]"}, tensor<14xf32> {jax.result_info = "result[1]"}, tensor<14xf32> {jax.result_info = "result[2]"}, tensor<14xf32> {jax.result_info = "result[3]"}, tensor<14xf32> {jax.result_info = "result[4]"}, tensor<14xi1> {jax.result_info = "result[5]"}, tensor<14xf32> {jax.result_info = "result[6]"}, tensor<14xf32> {jax.result_info = "result[7]"}) {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<14xf32>
    %1 = stablehlo.round_nearest_afz %arg0 : tensor<14xf32>
    %2 = stablehlo.floor %arg0 : tensor<14xf32>
    %3 = stablehlo.ceil %arg0 : tensor<14xf32>
    %4 = stablehlo.sign %arg0 : tensor<14xf32>
    %5 = stablehlo.is_finite %arg0 : (tensor<14xf32>) -> tensor<14xi1>
    %6 = stablehlo.negate %arg0 : tensor<14xf32>
    %7 = stablehlo.abs %arg0 : tensor<14xf32>
    return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xi1>, tensor<14xf32>, tensor<14xf32>
  }
}
