func.func @main(%a: tensor<4096xf64>, %b: tensor<4096xf64>, %c: tensor<4096xf64>, %d: tensor<4096xf64>) -> (tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>) {
  %k = stablehlo.constant dense<1.7> : tensor<4096xf64>
  %k2 = stablehlo.constant dense<-2.0> : tensor<4096xf64>
  %k3 = stablehlo.constant dense<3.0> : tensor<4096xf64>
  %km = stablehlo.constant dense<-1.0> : tensor<4096xf64>
  %sq = stablehlo.constant dense<2.0> : tensor<4096xf64>
  %0 = stablehlo.power %b, %c : tensor<4096xf64>
  %r0 = stablehlo.divide %a, %0 : tensor<4096xf64>
  %1 = stablehlo.divide %a, %b : tensor<4096xf64>
  %r1 = stablehlo.divide %1, %d : tensor<4096xf64>
  %2 = stablehlo.divide %b, %d : tensor<4096xf64>
  %r2 = stablehlo.divide %a, %2 : tensor<4096xf64>
  %r3 = stablehlo.divide %1, %2 : tensor<4096xf64>
  %3 = stablehlo.divide %k, %a : tensor<4096xf64>
  %r4 = stablehlo.divide %3, %b : tensor<4096xf64>
  %4 = stablehlo.divide %k, %b : tensor<4096xf64>
  %r5 = stablehlo.divide %a, %4 : tensor<4096xf64>
  %r6 = stablehlo.divide %1, %k : tensor<4096xf64>
  %5 = stablehlo.divide %b, %k : tensor<4096xf64>
  %r7 = stablehlo.divide %a, %5 : tensor<4096xf64>
  %r8 = stablehlo.power %a, %sq : tensor<4096xf64>
  %r9 = stablehlo.power %a, %k3 : tensor<4096xf64>
  %r10 = stablehlo.power %a, %km : tensor<4096xf64>
  %r11 = stablehlo.power %a, %k2 : tensor<4096xf64>
  %6 = stablehlo.power %b, %k2 : tensor<4096xf64>
  %r12 = stablehlo.divide %a, %6 : tensor<4096xf64>
  %7 = stablehlo.divide %r1, %c : tensor<4096xf64>
  %r13 = stablehlo.divide %7, %b : tensor<4096xf64>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %1, %0 : tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>
}
