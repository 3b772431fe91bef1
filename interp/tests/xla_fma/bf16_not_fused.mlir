func.func @main(%a: tensor<2048xbf16>, %b: tensor<2048xbf16>, %c: tensor<2048xbf16>) -> (tensor<2048xbf16>) {
  %m = stablehlo.multiply %a, %b : tensor<2048xbf16>
  %r0 = stablehlo.add %m, %c : tensor<2048xbf16>
  return %r0 : tensor<2048xbf16>
}
