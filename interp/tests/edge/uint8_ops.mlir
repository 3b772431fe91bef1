module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xui8>, %arg1: tensor<8xui8>) -> (tensor<8xui8> {jax.result_info = "result[0]"}, tensor<8xui8> {jax.result_info = "result[1]"}, tensor<8xui8> {jax.result_info = "result[2]"}, tensor<8xui8> {jax.result_info = "result[3]"}, tensor<8xui8> {jax.result_info = "result[4]"}, tensor<8xi1> {jax.result_info = "result[5]"}, tensor<8xui8> {jax.result_info = "result[6]"}, tensor<8xui8> {jax.result_info = "result[7]"}, tensor<8xui8> {jax.result_info = "result[8]"}, tensor<8xui8> {jax.result_info = "result[9]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8xui8>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<8xui8>
    %2 = stablehlo.divide %arg0, %arg1 : tensor<8xui8>
    %3 = stablehlo.remainder %arg0, %arg1 : tensor<8xui8>
    %4 = stablehlo.maximum %arg0, %arg1 : tensor<8xui8>
    %5 = stablehlo.compare LT, %arg0, %arg1, UNSIGNED : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xi1>
    %6 = stablehlo.shift_left %arg0, %arg1 : tensor<8xui8>
    %7 = stablehlo.shift_right_logical %arg0, %arg1 : tensor<8xui8>
    %8 = stablehlo.shift_right_arithmetic %arg0, %arg1 : tensor<8xui8>
    %9 = stablehlo.count_leading_zeros %arg0 : tensor<8xui8>
    return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<8xui8>, tensor<8xui8>, tensor<8xui8>, tensor<8xui8>, tensor<8xui8>, tensor<8xi1>, tensor<8xui8>, tensor<8xui8>, tensor<8xui8>, tensor<8xui8>
  }
}
