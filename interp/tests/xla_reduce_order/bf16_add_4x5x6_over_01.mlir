func.func @main(%x: tensor<4x5x6xbf16>) -> tensor<6xbf16> {
  %z = stablehlo.constant dense<0.0> : tensor<bf16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5x6xbf16>, tensor<bf16>) -> tensor<6xbf16>
  return %r : tensor<6xbf16>
}
