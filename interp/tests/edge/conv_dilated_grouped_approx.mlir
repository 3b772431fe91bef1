module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x7x5xf32>, %arg1: tensor<6x2x2x3xf32>) -> (tensor<1x6x4x8xf32> {jax.result_info = "result[0]"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 1], pad = [[1, 2], [0, 1]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x4x7x5xf32>, tensor<6x2x2x3xf32>) -> tensor<1x6x4x8xf32>
    return %0 : tensor<1x6x4x8xf32>
  }
}
