func.func @main(%x: tensor<4x4x2x8xf16>, %s: tensor<4xf16>, %m: tensor<4xf16>, %v: tensor<4xf16>, %dy: tensor<4x4x2x8xf16>) -> (tensor<4x4x2x8xf16>, tensor<4xf16>, tensor<4xf16>) {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %dy) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x4x2x8xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4x4x2x8xf16>) -> (tensor<4x4x2x8xf16>, tensor<4xf16>, tensor<4xf16>)
  return %0#0, %0#1, %0#2 : tensor<4x4x2x8xf16>, tensor<4xf16>, tensor<4xf16>
}