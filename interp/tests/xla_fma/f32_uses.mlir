func.func @main(%a: tensor<2048xf32>, %b: tensor<2048xf32>, %c: tensor<2048xf32>, %d: tensor<2048xf32>) -> (tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>) {
  %m0 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %r0 = stablehlo.add %m0, %c : tensor<2048xf32>
  %m1 = stablehlo.multiply %a, %d : tensor<2048xf32>
  %r1 = stablehlo.add %m1, %c : tensor<2048xf32>
  %q1 = stablehlo.multiply %m1, %d : tensor<2048xf32>
  %m2 = stablehlo.multiply %b, %d : tensor<2048xf32>
  %s2 = stablehlo.add %m2, %c : tensor<2048xf32>
  %r2 = stablehlo.add %s2, %m2 : tensor<2048xf32>
  %m3 = stablehlo.multiply %c, %d : tensor<2048xf32>
  %r3 = stablehlo.add %m3, %a : tensor<2048xf32>
  %q3 = stablehlo.add %m3, %b : tensor<2048xf32>
  return %r0, %m0, %r1, %q1, %r2, %r3, %q3 : tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>
}
