func.func @main(%x: tensor<2x3x64x64xf16>) -> tensor<3xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<2x3x64x64xf16>, tensor<f16>) -> tensor<3xf16>
  return %r : tensor<3xf16>
}
