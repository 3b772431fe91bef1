func.func @main(%x: tensor<2x3x4x5xf16>, %y: tensor<2x3x4x5xf16>) -> tensor<3xf16> {
  %p = stablehlo.multiply %x, %y : tensor<2x3x4x5xf16>
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0, 2, 3] : (tensor<2x3x4x5xf16>, tensor<f16>) -> tensor<3xf16>
  return %r : tensor<3xf16>
}
