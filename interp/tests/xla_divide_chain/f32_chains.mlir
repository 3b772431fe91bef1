func.func @main(%a: tensor<4096xf32>, %b: tensor<4096xf32>, %c: tensor<4096xf32>, %d: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) {
  %k = stablehlo.constant dense<1.7> : tensor<4096xf32>
  %k2 = stablehlo.constant dense<-2.0> : tensor<4096xf32>
  %k3 = stablehlo.constant dense<3.0> : tensor<4096xf32>
  %km = stablehlo.constant dense<-1.0> : tensor<4096xf32>
  %sq = stablehlo.constant dense<2.0> : tensor<4096xf32>
  %0 = stablehlo.power %b, %c : tensor<4096xf32>
  %r0 = stablehlo.divide %a, %0 : tensor<4096xf32>
  %1 = stablehlo.divide %a, %b : tensor<4096xf32>
  %r1 = stablehlo.divide %1, %d : tensor<4096xf32>
  %2 = stablehlo.divide %b, %d : tensor<4096xf32>
  %r2 = stablehlo.divide %a, %2 : tensor<4096xf32>
  %r3 = stablehlo.divide %1, %2 : tensor<4096xf32>
  %3 = stablehlo.divide %k, %a : tensor<4096xf32>
  %r4 = stablehlo.divide %3, %b : tensor<4096xf32>
  %4 = stablehlo.divide %k, %b : tensor<4096xf32>
  %r5 = stablehlo.divide %a, %4 : tensor<4096xf32>
  %r6 = stablehlo.divide %1, %k : tensor<4096xf32>
  %5 = stablehlo.divide %b, %k : tensor<4096xf32>
  %r7 = stablehlo.divide %a, %5 : tensor<4096xf32>
  %r8 = stablehlo.power %a, %sq : tensor<4096xf32>
  %r9 = stablehlo.power %a, %k3 : tensor<4096xf32>
  %r10 = stablehlo.power %a, %km : tensor<4096xf32>
  %r11 = stablehlo.power %a, %k2 : tensor<4096xf32>
  %6 = stablehlo.power %b, %k2 : tensor<4096xf32>
  %r12 = stablehlo.divide %a, %6 : tensor<4096xf32>
  %7 = stablehlo.divide %r1, %c : tensor<4096xf32>
  %r13 = stablehlo.divide %7, %b : tensor<4096xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %1, %0 : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>
}
