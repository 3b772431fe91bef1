module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>, %arg1: tensor<10xf32>) -> (tensor<10xf32> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}, tensor<10xf32> {jax.result_info = "result[2]"}, tensor<10xf32> {jax.result_info = "result[3]"}, tensor<10xf32> {jax.result_info = "result[4]"}, tensor<10xf32> {jax.result_info = "result[5]"}, tensor<10xf32> {jax.result_info = "result[6]"}, tensor<10xf32> {jax.result_info = "result[7]"}, tensor<10xf32> {jax.result_info = "result[8]"}, tensor<10xf32> {jax.result_info = "result[9]"}, tensor<10xf32> {jax.result_info = "result[10]"}, tensor<10xf32> {jax.result_info = "result[11]"}, tensor<10xf32> {jax.result_info = "result[12]"}, tensor<10xf32> {jax.result_info = "result[13]"}, tensor<10xf32> {jax.result_info = "result[14]"}, tensor<10xf32> {jax.result_info = "result[15]"}, tensor<10xf32> {jax.result_info = "result[16]"}) {
    %0 = stablehlo.exponential %arg1 : tensor<10xf32>
    %1 = stablehlo.log %arg0 : tensor<10xf32>
    %2 = stablehlo.tanh %arg1 : tensor<10xf32>
    %3 = stablehlo.negate %arg1 : tensor<10xf32>
    %4 = stablehlo.exponential %3 : tensor<10xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %6 = stablehlo.add %5, %4 : tensor<10xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %8 = stablehlo.divide %7, %6 : tensor<10xf32>
    %9 = chlo.erf %arg1 : tensor<10xf32> -> tensor<10xf32>
    %10 = stablehlo.exponential_minus_one %arg1 : tensor<10xf32>
    %11 = stablehlo.log_plus_one %arg0 : tensor<10xf32>
    %12 = stablehlo.sine %arg1 : tensor<10xf32>
    %13 = stablehlo.cosine %arg1 : tensor<10xf32>
    %14 = stablehlo.tan %arg1 : tensor<10xf32>
    %15 = stablehlo.cbrt %arg1 : tensor<10xf32>
    %16 = stablehlo.rsqrt %arg0 : tensor<10xf32>
    %17 = stablehlo.sqrt %arg0 : tensor<10xf32>
    %18 = chlo.lgamma %arg0 : tensor<10xf32> -> tensor<10xf32>
    %19 = chlo.digamma %arg0 : tensor<10xf32> -> tensor<10xf32>
    %cst_1 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %21 = stablehlo.divide %arg1, %20 : tensor<10xf32>
    %22 = chlo.erf_inv %21 : tensor<10xf32> -> tensor<10xf32>
    %23 = chlo.erfc %arg1 : tensor<10xf32> -> tensor<10xf32>
    return %0, %1, %2, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %22, %23 : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
  }
}
