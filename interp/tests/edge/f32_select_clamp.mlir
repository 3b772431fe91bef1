module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<14xi1>, %arg1: tensor<14xf32>, %arg2: tensor<14xf32>) -> (tensor<14xf32> {jax.result_info = "result[0]"}, tensor<14xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<14xi1>, tensor<14xf32>
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<14xf32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<14xf32>
    %3 = stablehlo.clamp %1, %arg1, %2 : tensor<14xf32>
    return %0, %3 : tensor<14xf32>, tensor<14xf32>
  }
}
