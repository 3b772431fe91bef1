func.func @main(%x: tensor<3x5x2x7xf16>) -> tensor<3x2xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1, 3] : (tensor<3x5x2x7xf16>, tensor<f16>) -> tensor<3x2xf16>
  return %r : tensor<3x2xf16>
}
