func.func @main(%x: tensor<2x3x4x5xf16>, %s: tensor<3xf16>, %o: tensor<3xf16>, %m: tensor<3xf16>, %v: tensor<3xf16>) -> tensor<2x3x4x5xf16> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3x4x5xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<2x3x4x5xf16>
  return %0 : tensor<2x3x4x5xf16>
}