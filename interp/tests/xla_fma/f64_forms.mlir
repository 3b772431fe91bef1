func.func @main(%a: tensor<2048xf64>, %b: tensor<2048xf64>, %c: tensor<2048xf64>, %d: tensor<2048xf64>) -> (tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>) {
  %k = stablehlo.constant dense<0.1> : tensor<2048xf64>
  %m = stablehlo.multiply %a, %b : tensor<2048xf64>
  %r0 = stablehlo.add %m, %c : tensor<2048xf64>
  %m1 = stablehlo.multiply %a, %b : tensor<2048xf64>
  %r1 = stablehlo.add %c, %m1 : tensor<2048xf64>
  %m2 = stablehlo.multiply %a, %b : tensor<2048xf64>
  %r2 = stablehlo.subtract %m2, %c : tensor<2048xf64>
  %m3 = stablehlo.multiply %a, %b : tensor<2048xf64>
  %r3 = stablehlo.subtract %c, %m3 : tensor<2048xf64>
  %m4 = stablehlo.multiply %a, %b : tensor<2048xf64>
  %n4 = stablehlo.negate %m4 : tensor<2048xf64>
  %r4 = stablehlo.add %n4, %c : tensor<2048xf64>
  %m5 = stablehlo.multiply %a, %k : tensor<2048xf64>
  %r5 = stablehlo.add %m5, %c : tensor<2048xf64>
  %m6 = stablehlo.multiply %a, %b : tensor<2048xf64>
  %p6 = stablehlo.multiply %c, %d : tensor<2048xf64>
  %r6 = stablehlo.add %m6, %p6 : tensor<2048xf64>
  %m7 = stablehlo.multiply %a, %b : tensor<2048xf64>
  %p7 = stablehlo.multiply %c, %d : tensor<2048xf64>
  %r7 = stablehlo.subtract %m7, %p7 : tensor<2048xf64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7 : tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>, tensor<2048xf64>
}
