module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12xf32>) -> (tensor<12xf32> {jax.result_info = "result[0]"}, tensor<12xf32> {jax.result_info = "result[1]"}, tensor<12xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<12xf32>
    %1 = stablehlo.reduce_precision %arg0, format = e8m7 : tensor<12xf32>
    %2 = stablehlo.reduce_precision %arg0, format = e4m3 : tensor<12xf32>
    return %0, %1, %2 : tensor<12xf32>, tensor<12xf32>, tensor<12xf32>
  }
}
