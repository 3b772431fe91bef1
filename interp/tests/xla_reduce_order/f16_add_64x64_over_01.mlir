func.func @main(%x: tensor<64x64xf16>) -> tensor<f16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x64xf16>, tensor<f16>) -> tensor<f16>
  return %r : tensor<f16>
}
