func.func @main(%x: tensor<4x5x6xf16>) -> tensor<6xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5x6xf16>, tensor<f16>) -> tensor<6xf16>
  return %r : tensor<6xf16>
}
