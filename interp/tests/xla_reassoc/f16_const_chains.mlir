func.func @main(%x: tensor<4096xf16>, %n1: tensor<4096xf16>, %n2: tensor<4096xf16>) -> (tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>) {
  %c1 = stablehlo.constant dense<0.3> : tensor<4096xf16>
  %c2 = stablehlo.constant dense<0.7001> : tensor<4096xf16>
  %s1 = stablehlo.constant dense<0.3> : tensor<f16>
  %s2 = stablehlo.constant dense<0.7001> : tensor<f16>
  %b1 = stablehlo.broadcast_in_dim %s1, dims = [] : (tensor<f16>) -> tensor<4096xf16>
  %b2 = stablehlo.broadcast_in_dim %s2, dims = [] : (tensor<f16>) -> tensor<4096xf16>
  %0 = stablehlo.subtract %x, %c1 : tensor<4096xf16>
  %r0 = stablehlo.add %0, %c1 : tensor<4096xf16>
  %1 = stablehlo.add %x, %c1 : tensor<4096xf16>
  %r1 = stablehlo.add %c2, %1 : tensor<4096xf16>
  %2 = stablehlo.subtract %x, %b1 : tensor<4096xf16>
  %r2 = stablehlo.add %2, %b2 : tensor<4096xf16>
  %3 = stablehlo.subtract %c1, %x : tensor<4096xf16>
  %r3 = stablehlo.add %3, %c2 : tensor<4096xf16>
  %4 = stablehlo.subtract %x, %c1 : tensor<4096xf16>
  %r4 = stablehlo.subtract %4, %c2 : tensor<4096xf16>
  %5 = stablehlo.multiply %x, %c1 : tensor<4096xf16>
  %r5 = stablehlo.multiply %c2, %5 : tensor<4096xf16>
  %6 = stablehlo.add %x, %n1 : tensor<4096xf16>
  %r6 = stablehlo.add %6, %n2 : tensor<4096xf16>
  %r7 = stablehlo.add %6, %c2 : tensor<4096xf16>
  %7 = stablehlo.add %r0, %c2 : tensor<4096xf16>
  %r8 = stablehlo.add %7, %c1 : tensor<4096xf16>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %6 : tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>
}
