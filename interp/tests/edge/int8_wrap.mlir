module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xi8>, %arg1: tensor<5xi8>) -> (tensor<5xi8> {jax.result_info = "result[0]"}, tensor<5xi8> {jax.result_info = "result[1]"}, tensor<5xi8> {jax.result_info = "result[2]"}, tensor<5xi8> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<5xi8>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<5xi8>
    %2 = stablehlo.negate %arg0 : tensor<5xi8>
    %3 = stablehlo.divide %arg0, %arg1 : tensor<5xi8>
    return %0, %1, %2, %3 : tensor<5xi8>, tensor<5xi8>, tensor<5xi8>, tensor<5xi8>
  }
}
