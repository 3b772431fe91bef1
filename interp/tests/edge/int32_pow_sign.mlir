module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi32>) -> (tensor<10xi32> {jax.result_info = "result[0]"}, tensor<10xi32> {jax.result_info = "result[1]"}, tensor<10xi32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<10xi32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<10xi32>
    %2 = stablehlo.multiply %arg0, %arg0 : tensor<10xi32>
    %3 = stablehlo.sign %arg0 : tensor<10xi32>
    return %1, %2, %3 : tensor<10xi32>, tensor<10xi32>, tensor<10xi32>
  }
}
