module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9xi32>, %arg1: tensor<9xui32>) -> (tensor<9xf32> {jax.result_info = "result[0]"}, tensor<9xf16> {jax.result_info = "result[1]"}, tensor<9xbf16> {jax.result_info = "result[2]"}, tensor<9xi8> {jax.result_info = "result[3]"}, tensor<9xui16> {jax.result_info = "result[4]"}, tensor<9xi1> {jax.result_info = "result[5]"}, tensor<9xf64> {jax.result_info = "result[6]"}, tensor<9xf32> {jax.result_info = "result[7]"}, tensor<9xi32> {jax.result_info = "result[8]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<9xi32>) -> tensor<9xf32>
    %1 = stablehlo.convert %arg0 : (tensor<9xi32>) -> tensor<9xf16>
    %2 = stablehlo.convert %arg0 : (tensor<9xi32>) -> tensor<9xbf16>
    %3 = stablehlo.convert %arg0 : (tensor<9xi32>) -> tensor<9xi8>
    %4 = stablehlo.convert %arg0 : (tensor<9xi32>) -> tensor<9xui16>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<9xi32>
    %6 = stablehlo.compare NE, %arg0, %5, SIGNED : (tensor<9xi32>, tensor<9xi32>) -> tensor<9xi1>
    %7 = stablehlo.convert %6 : tensor<9xi1>
    %8 = stablehlo.convert %arg0 : (tensor<9xi32>) -> tensor<9xf64>
    %9 = stablehlo.convert %arg1 : (tensor<9xui32>) -> tensor<9xf32>
    %10 = stablehlo.convert %arg1 : (tensor<9xui32>) -> tensor<9xi32>
    return %0, %1, %2, %3, %4, %7, %8, %9, %10 : tensor<9xf32>, tensor<9xf16>, tensor<9xbf16>, tensor<9xi8>, tensor<9xui16>, tensor<9xi1>, tensor<9xf64>, tensor<9xf32>, tensor<9xi32>
  }
}
