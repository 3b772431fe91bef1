func.func @main(%a: tensor<2048xf16>, %b: tensor<2048xf16>, %c: tensor<2048xf16>) -> (tensor<2048xf16>) {
  %m = stablehlo.multiply %a, %b : tensor<2048xf16>
  %r0 = stablehlo.add %m, %c : tensor<2048xf16>
  return %r0 : tensor<2048xf16>
}
