func.func @main(%x: tensor<32x4x7xf16>) -> tensor<4xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2] : (tensor<32x4x7xf16>, tensor<f16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}
