func.func @main(%a0: tensor<1x5xf32>, %b0: tensor<1x5xf32>, %a1: tensor<3x8xf32>, %b1: tensor<3x8xf32>, %a2: tensor<2x16xf32>, %b2: tensor<2x16xf32>, %a3: tensor<3x32xf32>, %b3: tensor<3x32xf32>, %x0: tensor<3xf32>, %y0: tensor<3xf32>, %x1: tensor<5xf32>, %y1: tensor<5xf32>, %x2: tensor<8xf32>, %y2: tensor<8xf32>, %x3: tensor<17xf32>, %y3: tensor<17xf32>, %p: tensor<5x3xf32>, %q: tensor<5x3xf32>) -> (tensor<1xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<3xf32>) {
  %init = stablehlo.constant dense<0.25> : tensor<f32>
  %m0 = stablehlo.multiply %a0, %b0 : tensor<1x5xf32>
  %s0 = stablehlo.reduce(%m0 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<1x5xf32>, tensor<f32>) -> tensor<1xf32>
  %m1 = stablehlo.multiply %a1, %b1 : tensor<3x8xf32>
  %s1 = stablehlo.reduce(%m1 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
  %m2 = stablehlo.multiply %a2, %b2 : tensor<2x16xf32>
  %s2 = stablehlo.reduce(%m2 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2xf32>
  %m3 = stablehlo.multiply %a3, %b3 : tensor<3x32xf32>
  %s3 = stablehlo.reduce(%m3 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<3x32xf32>, tensor<f32>) -> tensor<3xf32>
  %d0 = stablehlo.dot_general %x0, %y0, contracting_dims = [0] x [0] : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %d1 = stablehlo.dot_general %x1, %y1, contracting_dims = [0] x [0] : (tensor<5xf32>, tensor<5xf32>) -> tensor<f32>
  %d2 = stablehlo.dot_general %x2, %y2, contracting_dims = [0] x [0] : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  %d3 = stablehlo.dot_general %x3, %y3, contracting_dims = [0] x [0] : (tensor<17xf32>, tensor<17xf32>) -> tensor<f32>
  %mp = stablehlo.multiply %p, %q : tensor<5x3xf32>
  %sp = stablehlo.reduce(%mp init: %init) applies stablehlo.add across dimensions = [0] : (tensor<5x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %s0, %s1, %s2, %s3, %d0, %d1, %d2, %d3, %sp : tensor<1xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<3xf32>
}
