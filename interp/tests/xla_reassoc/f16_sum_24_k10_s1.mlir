func.func @main(%p0: tensor<6x24xf16>) -> (tensor<6xf16>) {
  %z0 = stablehlo.multiply %p0, %p0 : tensor<6x24xf16>
  %z1 = stablehlo.add %z0, %p0 : tensor<6x24xf16>
  %z2 = stablehlo.multiply %z1, %p0 : tensor<6x24xf16>
  %z3 = stablehlo.add %z2, %p0 : tensor<6x24xf16>
  %z4 = stablehlo.multiply %z3, %p0 : tensor<6x24xf16>
  %z5 = stablehlo.add %z4, %p0 : tensor<6x24xf16>
  %z6 = stablehlo.multiply %z5, %p0 : tensor<6x24xf16>
  %z7 = stablehlo.add %z6, %p0 : tensor<6x24xf16>
  %z8 = stablehlo.multiply %z7, %p0 : tensor<6x24xf16>
  %z9 = stablehlo.add %z8, %p0 : tensor<6x24xf16>
  %zero = stablehlo.constant dense<0.0> : tensor<f16>
  %r = stablehlo.reduce(%z9 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<6x24xf16>, tensor<f16>) -> tensor<6xf16>
  return %r : tensor<6xf16>
}
