module @jit_wrapped attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xui64>) -> (tensor<2xui64> {jax.result_info = "result[0]"}, tensor<4x6xui32> {jax.result_info = "result[1]"}, tensor<2xui64> {jax.result_info = "result[2]"}, tensor<3x3xui32> {jax.result_info = "result[3]"}, tensor<2xui64> {jax.result_info = "result[4]"}, tensor<2x5xui64> {jax.result_info = "result[5]"}, tensor<2xui64> {jax.result_info = "result[6]"}, tensor<7xui32> {jax.result_info = "result[7]"}) {
    %output_state, %output = stablehlo.rng_bit_generator %arg0, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4x6xui32>)
    %output_state_0, %output_1 = stablehlo.rng_bit_generator %arg0, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x3xui32>)
    %output_state_2, %output_3 = stablehlo.rng_bit_generator %arg0, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x5xui64>)
    %output_state_4, %output_5 = stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<7xui32>)
    return %output_state, %output, %output_state_0, %output_1, %output_state_2, %output_3, %output_state_4, %output_5 : tensor<2xui64>, tensor<4x6xui32>, tensor<2xui64>, tensor<3x3xui32>, tensor<2xui64>, tensor<2x5xui64>, tensor<2xui64>, tensor<7xui32>
  }
}
