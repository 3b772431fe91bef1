func.func @main(%x: tensor<27x5x3xf16>) -> tensor<5xf16> {
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0, 2] : (tensor<27x5x3xf16>, tensor<f16>) -> tensor<5xf16>
  return %r : tensor<5xf16>
}
