module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xi8>, %arg1: tensor<3x2xi8>) -> (tensor<2x2xi32> {jax.result_info = "result[0]"}, tensor<2x2xi8> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>
    %1 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi8>
    return %0, %1 : tensor<2x2xi32>, tensor<2x2xi8>
  }
}
