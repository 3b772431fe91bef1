func.func @main(%a: tensor<2048xf32>, %b: tensor<2048xf32>, %c: tensor<2048xf32>, %d: tensor<2048xf32>) -> (tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>) {
  %k = stablehlo.constant dense<0.1> : tensor<2048xf32>
  %m = stablehlo.multiply %a, %b : tensor<2048xf32>
  %r0 = stablehlo.add %m, %c : tensor<2048xf32>
  %m1 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %r1 = stablehlo.add %c, %m1 : tensor<2048xf32>
  %m2 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %r2 = stablehlo.subtract %m2, %c : tensor<2048xf32>
  %m3 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %r3 = stablehlo.subtract %c, %m3 : tensor<2048xf32>
  %m4 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %n4 = stablehlo.negate %m4 : tensor<2048xf32>
  %r4 = stablehlo.add %n4, %c : tensor<2048xf32>
  %m5 = stablehlo.multiply %a, %k : tensor<2048xf32>
  %r5 = stablehlo.add %m5, %c : tensor<2048xf32>
  %m6 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %p6 = stablehlo.multiply %c, %d : tensor<2048xf32>
  %r6 = stablehlo.add %m6, %p6 : tensor<2048xf32>
  %m7 = stablehlo.multiply %a, %b : tensor<2048xf32>
  %p7 = stablehlo.multiply %c, %d : tensor<2048xf32>
  %r7 = stablehlo.subtract %m7, %p7 : tensor<2048xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>, tensor<2048xf32>
}
