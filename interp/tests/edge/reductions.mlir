module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3xf32>, %arg1: tensor<2x3xi32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xf32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<3xf32> {jax.result_info = "result[3]"}, tensor<2xi64> {jax.result_info = "result[4]"}, tensor<i32> {jax.result_info = "result[5]"}, tensor<3xi1> {jax.result_info = "result[6]"}, tensor<3xi64> {jax.result_info = "result[7]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3x3xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<3x3xf32>, tensor<f32>) -> tensor<3xf32>
    %cst_1 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.minimum across dimensions = [0, 1] : (tensor<3x3xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%arg0 init: %cst_2) applies stablehlo.multiply across dimensions = [1] : (tensor<3x3xf32>, tensor<f32>) -> tensor<3xf32>
    %4 = stablehlo.convert %arg1 : (tensor<2x3xi32>) -> tensor<2x3xi64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %5 = stablehlo.reduce(%4 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi64>, tensor<i64>) -> tensor<2xi64>
    %c_3 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %6 = stablehlo.reduce(%arg1 init: %c_3) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<i32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %8 = stablehlo.compare GT, %arg0, %7, FLOAT : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xi1>
    %c_5 = stablehlo.constant dense<false> : tensor<i1>
    %9 = stablehlo.reduce(%8 init: %c_5) applies stablehlo.or across dimensions = [0] : (tensor<3x3xi1>, tensor<i1>) -> tensor<3xi1>
    %10 = call @argmin(%arg0) : (tensor<3x3xf32>) -> tensor<3xi64>
    return %0, %1, %2, %3, %5, %6, %9, %10 : tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<2xi64>, tensor<i32>, tensor<3xi1>, tensor<3xi64>
  }
  func.func private @argmin(%arg0: tensor<3x3xf32>) -> tensor<3xi64> {
    %0 = stablehlo.iota dim = 1 : tensor<3x3xi64>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<3x3xf32>, tensor<3x3xi64>, tensor<f32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xi64>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i64>, %arg4: tensor<i64>)  {
      %2 = stablehlo.compare LT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i64>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i64>
    }
    return %1#1 : tensor<3xi64>
  }
}
