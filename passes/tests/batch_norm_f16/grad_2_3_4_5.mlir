func.func @main(%x: tensor<2x3x4x5xf16>, %s: tensor<3xf16>, %m: tensor<3xf16>, %v: tensor<3xf16>, %dy: tensor<2x3x4x5xf16>) -> (tensor<2x3x4x5xf16>, tensor<3xf16>, tensor<3xf16>) {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %dy) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3x4x5xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<2x3x4x5xf16>) -> (tensor<2x3x4x5xf16>, tensor<3xf16>, tensor<3xf16>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4x5xf16>, tensor<3xf16>, tensor<3xf16>
}