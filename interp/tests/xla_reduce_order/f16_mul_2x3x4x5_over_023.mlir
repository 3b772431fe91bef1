func.func @main(%x: tensor<2x3x4x5xf16>) -> tensor<3xf16> {
  %z = stablehlo.constant dense<1.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.multiply across dimensions = [0, 2, 3] : (tensor<2x3x4x5xf16>, tensor<f16>) -> tensor<3xf16>
  return %r : tensor<3xf16>
}
