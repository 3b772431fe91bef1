module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<14xf32>, %arg1: tensor<14xf32>) -> (tensor<14xi1> {jax.result_info = "result[0]"}, tensor<14xi1> {jax.result_info = "result[1]"}, tensor<14xi1> {jax.result_info = "result[2]"}, tensor<14xi1> {jax.result_info = "result[3]"}, tensor<14xf32> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.compare EQ, %arg0, %arg1, FLOAT : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xi1>
    %1 = stablehlo.compare NE, %arg0, %arg1, FLOAT : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xi1>
    %2 = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xi1>
    %3 = stablehlo.compare GE, %arg0, %arg1, FLOAT : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xi1>
    %4 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_0, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_1, %6 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %9 = stablehlo.compare EQ, %arg3, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %10 = stablehlo.select %9, %cst_3, %arg3 : tensor<i1>, tensor<f32>
      %11 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %12 = stablehlo.select %11, %cst_4, %10 : tensor<i1>, tensor<f32>
      %13 = stablehlo.compare LT, %8, %12, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %13 : tensor<i1>
    }) : (tensor<14xf32>) -> tensor<14xf32>
    return %0, %1, %2, %3, %4 : tensor<14xi1>, tensor<14xi1>, tensor<14xi1>, tensor<14xi1>, tensor<14xf32>
  }
}
