func.func @main(%x: tensor<6x32xf16>, %dy: tensor<6x32xf16>) -> (tensor<1x6x32xf16>, tensor<6xf16>, tensor<6xf16>) {
  %one = stablehlo.constant dense<1.0> : tensor<6xf16>
  %zero = stablehlo.constant dense<0.0> : tensor<6xf16>
  %eps = stablehlo.constant dense<1.001360e-05> : tensor<6xf16>
  %x3 = stablehlo.reshape %x : (tensor<6x32xf16>) -> tensor<1x6x32xf16>
  %dy3 = stablehlo.reshape %dy : (tensor<6x32xf16>) -> tensor<1x6x32xf16>
  %y, %mean, %var = "stablehlo.batch_norm_training"(%x3, %one, %zero) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x6x32xf16>, tensor<6xf16>, tensor<6xf16>) -> (tensor<1x6x32xf16>, tensor<6xf16>, tensor<6xf16>)
  %0 = stablehlo.add %var, %eps : tensor<6xf16>
  %1 = stablehlo.rsqrt %0 : tensor<6xf16>
  %2 = stablehlo.divide %one, %1 : tensor<6xf16>
  %3 = stablehlo.multiply %2, %2 : tensor<6xf16>
  %4 = stablehlo.subtract %3, %eps : tensor<6xf16>
  %gx, %gs, %go = "stablehlo.batch_norm_grad"(%x3, %one, %mean, %4, %dy3) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<1x6x32xf16>, tensor<6xf16>, tensor<6xf16>, tensor<6xf16>, tensor<1x6x32xf16>) -> (tensor<1x6x32xf16>, tensor<6xf16>, tensor<6xf16>)
  return %gx, %gs, %go : tensor<1x6x32xf16>, tensor<6xf16>, tensor<6xf16>
}
