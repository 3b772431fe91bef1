func.func @main(%x: tensor<4096xf16>, %a: tensor<4096xf16>) -> (tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>) {
  %0 = stablehlo.sqrt %x : tensor<4096xf16>
  %r0 = stablehlo.divide %a, %0 : tensor<4096xf16>
  %1 = stablehlo.rsqrt %x : tensor<4096xf16>
  %r1 = stablehlo.divide %a, %1 : tensor<4096xf16>
  %2 = stablehlo.sqrt %a : tensor<4096xf16>
  %r2 = stablehlo.divide %x, %2 : tensor<4096xf16>
  %3 = stablehlo.sqrt %x : tensor<4096xf16>
  %r3 = stablehlo.divide %a, %3 : tensor<4096xf16>
  %r4 = stablehlo.multiply %3, %a : tensor<4096xf16>
  %one = stablehlo.constant dense<1.0> : tensor<4096xf16>
  %4 = stablehlo.rsqrt %a : tensor<4096xf16>
  %r5 = stablehlo.divide %one, %4 : tensor<4096xf16>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>
}
