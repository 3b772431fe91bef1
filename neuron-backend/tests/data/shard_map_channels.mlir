module @jit_body attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x4xf32>, %arg1: tensor<4x5xf32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<6x5xf32> {jax.result_info = "result[1]"}, tensor<6x5xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
    %1 = stablehlo.tanh %0 : tensor<6x5xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<6x5xf32>, tensor<f32>) -> tensor<5xf32>
    %3 = "stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<0> : tensor<1x1xi64>, use_global_device_ids}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %18 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %18 : tensor<f32>
    }) : (tensor<5xf32>) -> tensor<5xf32>
    %4 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<0> : tensor<1x1xi64>, use_global_device_ids}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %18 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %18 : tensor<f32>
    }) : (tensor<6x5xf32>) -> tensor<6x5xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6x5xf32>
    %6 = stablehlo.divide %4, %5 : tensor<6x5xf32>
    %7 = "stablehlo.all_gather"(%1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<0> : tensor<1x1xi64>, use_global_device_ids}> : (tensor<6x5xf32>) -> tensor<6x5xf32>
    %8 = "stablehlo.collective_permute"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<0> : tensor<1x2xi64>}> : (tensor<6x5xf32>) -> tensor<6x5xf32>
    %c = stablehlo.constant dense<1> : tensor<ui32>
    %c_1 = stablehlo.constant dense<1> : tensor<ui32>
    %9 = stablehlo.partition_id : tensor<ui32>
    %10 = stablehlo.divide %9, %c : tensor<ui32>
    %11 = stablehlo.remainder %10, %c_1 : tensor<ui32>
    %12 = stablehlo.convert %11 : (tensor<ui32>) -> tensor<i32>
    %13 = stablehlo.add %6, %8 : tensor<6x5xf32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %14 = stablehlo.add %12, %c_2 : tensor<i32>
    %15 = stablehlo.convert %14 : (tensor<i32>) -> tensor<f32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<f32>) -> tensor<6x5xf32>
    %17 = stablehlo.multiply %7, %16 : tensor<6x5xf32>
    return %3, %13, %17 : tensor<5xf32>, tensor<6x5xf32>, tensor<6x5xf32>
  }
}
