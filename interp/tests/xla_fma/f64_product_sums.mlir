func.func @main(%a0: tensor<1x5xf64>, %b0: tensor<1x5xf64>, %a1: tensor<3x8xf64>, %b1: tensor<3x8xf64>, %a2: tensor<2x16xf64>, %b2: tensor<2x16xf64>, %a3: tensor<3x32xf64>, %b3: tensor<3x32xf64>, %x0: tensor<3xf64>, %y0: tensor<3xf64>, %x1: tensor<5xf64>, %y1: tensor<5xf64>, %x2: tensor<8xf64>, %y2: tensor<8xf64>, %x3: tensor<17xf64>, %y3: tensor<17xf64>, %p: tensor<5x3xf64>, %q: tensor<5x3xf64>) -> (tensor<1xf64>, tensor<3xf64>, tensor<2xf64>, tensor<3xf64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<3xf64>) {
  %init = stablehlo.constant dense<0.25> : tensor<f64>
  %m0 = stablehlo.multiply %a0, %b0 : tensor<1x5xf64>
  %s0 = stablehlo.reduce(%m0 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<1x5xf64>, tensor<f64>) -> tensor<1xf64>
  %m1 = stablehlo.multiply %a1, %b1 : tensor<3x8xf64>
  %s1 = stablehlo.reduce(%m1 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<3x8xf64>, tensor<f64>) -> tensor<3xf64>
  %m2 = stablehlo.multiply %a2, %b2 : tensor<2x16xf64>
  %s2 = stablehlo.reduce(%m2 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<2x16xf64>, tensor<f64>) -> tensor<2xf64>
  %m3 = stablehlo.multiply %a3, %b3 : tensor<3x32xf64>
  %s3 = stablehlo.reduce(%m3 init: %init) applies stablehlo.add across dimensions = [1] : (tensor<3x32xf64>, tensor<f64>) -> tensor<3xf64>
  %d0 = stablehlo.dot_general %x0, %y0, contracting_dims = [0] x [0] : (tensor<3xf64>, tensor<3xf64>) -> tensor<f64>
  %d1 = stablehlo.dot_general %x1, %y1, contracting_dims = [0] x [0] : (tensor<5xf64>, tensor<5xf64>) -> tensor<f64>
  %d2 = stablehlo.dot_general %x2, %y2, contracting_dims = [0] x [0] : (tensor<8xf64>, tensor<8xf64>) -> tensor<f64>
  %d3 = stablehlo.dot_general %x3, %y3, contracting_dims = [0] x [0] : (tensor<17xf64>, tensor<17xf64>) -> tensor<f64>
  %mp = stablehlo.multiply %p, %q : tensor<5x3xf64>
  %sp = stablehlo.reduce(%mp init: %init) applies stablehlo.add across dimensions = [0] : (tensor<5x3xf64>, tensor<f64>) -> tensor<3xf64>
  return %s0, %s1, %s2, %s3, %d0, %d1, %d2, %d3, %sp : tensor<1xf64>, tensor<3xf64>, tensor<2xf64>, tensor<3xf64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<3xf64>
}
