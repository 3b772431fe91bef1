module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xcomplex<f32>>, %arg1: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f32>> {jax.result_info = "result[0]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[3]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[4]"}, tensor<4xf32> {jax.result_info = "result[5]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[6]"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<4xcomplex<f32>>
    %1 = stablehlo.divide %arg0, %arg1 : tensor<4xcomplex<f32>>
    %2 = stablehlo.abs %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %3 = stablehlo.exponential %arg0 : tensor<4xcomplex<f32>>
    %4 = stablehlo.sqrt %arg0 : tensor<4xcomplex<f32>>
    %5 = stablehlo.multiply %arg0, %arg1 : tensor<4xcomplex<f32>>
    %6 = stablehlo.real %5 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %7 = stablehlo.real %arg0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %8 = stablehlo.imag %arg1 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %9 = stablehlo.complex %7, %8 : tensor<4xcomplex<f32>>
    return %0, %1, %2, %3, %4, %6, %9 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<4xcomplex<f32>>
  }
}
