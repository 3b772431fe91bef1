func.func @main(%x: tensor<2x8x8x8xf16>) -> tensor<8xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<2x8x8x8xf16>, tensor<f16>) -> tensor<8xf16>
  return %r : tensor<8xf16>
}
