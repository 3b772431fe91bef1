func.func @main(%a: tensor<4096xf16>, %b: tensor<4096xf16>, %c: tensor<4096xf16>, %d: tensor<4096xf16>, %c2: tensor<4096xf16>) -> (tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>) {
  %e = stablehlo.exponential %b : tensor<4096xf16>
  %r0 = stablehlo.divide %a, %e : tensor<4096xf16>
  %ea = stablehlo.exponential %a : tensor<4096xf16>
  %r1 = stablehlo.multiply %ea, %e : tensor<4096xf16>
  %r2 = stablehlo.divide %ea, %e : tensor<4096xf16>
  %q = stablehlo.divide %d, %a : tensor<4096xf16>
  %r3 = stablehlo.divide %q, %e : tensor<4096xf16>
  %s = stablehlo.sqrt %a : tensor<4096xf16>
  %r4 = stablehlo.log %s : tensor<4096xf16>
  %rs = stablehlo.rsqrt %a : tensor<4096xf16>
  %r5 = stablehlo.log %rs : tensor<4096xf16>
  %p = stablehlo.power %b, %c : tensor<4096xf16>
  %r6 = stablehlo.log %p : tensor<4096xf16>
  %s2 = stablehlo.sqrt %c2 : tensor<4096xf16>
  %r7 = stablehlo.divide %q, %s2 : tensor<4096xf16>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %e, %s : tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>, tensor<4096xf16>
}
