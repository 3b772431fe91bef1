module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>, %arg1: tensor<5xi32>, %arg2: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<10xf32> {jax.result_info = "result[1]"}, tensor<10xf32> {jax.result_info = "result[2]"}, tensor<10xf32> {jax.result_info = "result[3]"}, tensor<5xf32> {jax.result_info = "result[4]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_0 = stablehlo.constant dense<10> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<5xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<5xi1>, tensor<5xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<10xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %8 = stablehlo.compare LT, %arg1, %7, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_2 = stablehlo.constant dense<10> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %10 = stablehlo.add %arg1, %9 : tensor<5xi32>
    %11 = stablehlo.select %8, %10, %arg1 : tensor<5xi1>, tensor<5xi32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %13 = "stablehlo.scatter"(%arg0, %12, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %29 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %29 : tensor<f32>
    }) : (tensor<10xf32>, tensor<5x1xi32>, tensor<5xf32>) -> tensor<10xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %15 = stablehlo.compare LT, %arg1, %14, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_4 = stablehlo.constant dense<10> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %17 = stablehlo.add %arg1, %16 : tensor<5xi32>
    %18 = stablehlo.select %15, %17, %arg1 : tensor<5xi1>, tensor<5xi32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %20 = "stablehlo.scatter"(%arg0, %19, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      stablehlo.return %arg4 : tensor<f32>
    }) : (tensor<10xf32>, tensor<5x1xi32>, tensor<5xf32>) -> tensor<10xf32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %21 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %22 = stablehlo.compare LT, %arg1, %21, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_6 = stablehlo.constant dense<10> : tensor<i32>
    %23 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %24 = stablehlo.add %arg1, %23 : tensor<5xi32>
    %25 = stablehlo.select %22, %24, %arg1 : tensor<5xi1>, tensor<5xi32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %27 = "stablehlo.scatter"(%arg0, %26, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %29 = stablehlo.maximum %arg3, %arg4 : tensor<f32>
      stablehlo.return %29 : tensor<f32>
    }) : (tensor<10xf32>, tensor<5x1xi32>, tensor<5xf32>) -> tensor<10xf32>
    %28 = call @_take(%arg0, %arg1) : (tensor<10xf32>, tensor<5xi32>) -> tensor<5xf32>
    return %6, %13, %20, %27, %28 : tensor<5xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<5xf32>
  }
  func.func private @_take(%arg0: tensor<10xf32>, %arg1: tensor<5xi32>) -> tensor<5xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %1 = "stablehlo.gather"(%arg0, %0) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<10xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    return %1 : tensor<5xf32>
  }
}
