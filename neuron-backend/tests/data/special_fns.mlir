module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xf32>, %arg4: tensor<16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<3x10xf32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<4x8xf32> {jax.result_info = "result[2]"}, tensor<4x8xf32> {jax.result_info = "result[3]"}, tensor<4x8xf32> {jax.result_info = "result[4]"}, tensor<4x8xf32> {jax.result_info = "result[5]"}, tensor<4x8xf32> {jax.result_info = "result[6]"}, tensor<4x8xf32> {jax.result_info = "result[7]"}, tensor<4x8xf32> {jax.result_info = "result[8]"}, tensor<4x8xf32> {jax.result_info = "result[9]"}, tensor<4x8xf32> {jax.result_info = "result[10]"}, tensor<4x8xf32> {jax.result_info = "result[11]"}, tensor<4x8xf32> {jax.result_info = "result[12]"}, tensor<4x8xf32> {jax.result_info = "result[13]"}, tensor<4x8xf32> {jax.result_info = "result[14]"}, tensor<16xf32> {jax.result_info = "result[15]"}, tensor<3x3xf32> {jax.result_info = "result[16]"}, tensor<3x3xi32> {jax.result_info = "result[17]"}) {
    %0 = chlo.lgamma %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>
    %1 = chlo.lgamma %arg1 : tensor<4x8xf32> -> tensor<4x8xf32>
    %2 = chlo.digamma %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>
    %3 = chlo.digamma %arg1 : tensor<4x8xf32> -> tensor<4x8xf32>
    %4 = chlo.erf_inv %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %5 = chlo.erfc %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %7 = stablehlo.multiply %arg2, %6 : tensor<4x8xf32>
    %8 = chlo.erf_inv %7 : tensor<4x8xf32> -> tensor<4x8xf32>
    %9 = chlo.asin %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %10 = chlo.acos %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %11 = chlo.atan %arg3 : tensor<4x8xf32> -> tensor<4x8xf32>
    %12 = chlo.sinh %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %13 = chlo.cosh %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %14 = chlo.asinh %arg3 : tensor<4x8xf32> -> tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %16 = stablehlo.add %arg3, %15 : tensor<4x8xf32>
    %17 = call @arccosh(%16) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %18 = chlo.atanh %arg2 : tensor<4x8xf32> -> tensor<4x8xf32>
    %19 = chlo.next_after %arg4, %arg5 : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    %values, %indices = chlo.top_k(%arg6, k = 3) : tensor<3x10xf32> -> (tensor<3x3xf32>, tensor<3x3xi32>)
    return %0, %1, %2, %3, %4, %5, %8, %9, %10, %11, %12, %13, %14, %17, %18, %19, %values, %indices : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<16xf32>, tensor<3x3xf32>, tensor<3x3xi32>
  }
  func.func private @arccosh(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = chlo.acosh %arg0 : tensor<4x8xf32> -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
