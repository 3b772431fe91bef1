func.func @main(%x: tensor<4x6xf16>, %s: tensor<6xf16>, %o: tensor<6xf16>) -> (tensor<4x6xf16>, tensor<6xf16>, tensor<6xf16>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x6xf16>, tensor<6xf16>, tensor<6xf16>) -> (tensor<4x6xf16>, tensor<6xf16>, tensor<6xf16>)
  return %0#0, %0#1, %0#2 : tensor<4x6xf16>, tensor<6xf16>, tensor<6xf16>
}