module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<i32>) -> (tensor<6x4xf32> {jax.result_info = "result[0]"}, tensor<2x2xf32> {jax.result_info = "result[1]"}, tensor<3x4xf32> {jax.result_info = "result[2]"}, tensor<3x4xf32> {jax.result_info = "result[3]"}, tensor<2x2xf32> {jax.result_info = "result[4]"}) {
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [-1, 1], high = [2, -1], interior = [1, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<6x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %2 = stablehlo.add %arg1, %c_0 : tensor<i32>
    %3 = stablehlo.select %1, %2, %arg1 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare LT, %arg1, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<4> : tensor<i32>
    %5 = stablehlo.add %arg1, %c_2 : tensor<i32>
    %6 = stablehlo.select %4, %5, %arg1 : tensor<i1>, tensor<i32>
    %7 = stablehlo.dynamic_slice %arg0, %3, %6, sizes = [2, 2] : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %9 = stablehlo.negate %arg1 : tensor<i32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %10 = stablehlo.compare LT, %arg1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_5 = stablehlo.constant dense<3> : tensor<i32>
    %11 = stablehlo.add %arg1, %c_5 : tensor<i32>
    %12 = stablehlo.select %10, %11, %arg1 : tensor<i1>, tensor<i32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %13 = stablehlo.compare LT, %9, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_7 = stablehlo.constant dense<4> : tensor<i32>
    %14 = stablehlo.add %9, %c_7 : tensor<i32>
    %15 = stablehlo.select %13, %14, %9 : tensor<i1>, tensor<i32>
    %16 = stablehlo.dynamic_update_slice %arg0, %8, %12, %15 : (tensor<3x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
    %17 = stablehlo.reverse %arg0, dims = [0, 1] : tensor<3x4xf32>
    %18 = stablehlo.slice %arg0 [0:3:2, 1:4:2] : (tensor<3x4xf32>) -> tensor<2x2xf32>
    return %0, %7, %16, %17, %18 : tensor<6x4xf32>, tensor<2x2xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x2xf32>
  }
}
