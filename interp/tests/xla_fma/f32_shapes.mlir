func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64x64xf32>, %x: tensor<64x64xf32>, %y: tensor<64x64xf32>, %z: tensor<4096xf32>, %w: tensor<65xf32>) -> (tensor<64x64xf32>, tensor<4096xf32>, tensor<65xf32>, tensor<32x32xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m0 = stablehlo.multiply %a, %b : tensor<64xf32>
  %b0 = stablehlo.broadcast_in_dim %m0, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>
  %r0 = stablehlo.add %b0, %c : tensor<64x64xf32>
  %m1 = stablehlo.multiply %x, %y : tensor<64x64xf32>
  %s1 = stablehlo.reshape %m1 : (tensor<64x64xf32>) -> tensor<4096xf32>
  %r1 = stablehlo.subtract %z, %s1 : tensor<4096xf32>
  %m2 = stablehlo.multiply %a, %b : tensor<64xf32>
  %n2 = stablehlo.negate %m2 : tensor<64xf32>
  %p2 = stablehlo.pad %n2, %zero, low = [1], high = [0], interior = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<65xf32>
  %r2 = stablehlo.add %w, %p2 : tensor<65xf32>
  %m3 = stablehlo.multiply %x, %y : tensor<64x64xf32>
  %s3 = stablehlo.slice %m3 [1:33, 0:64:2] : (tensor<64x64xf32>) -> tensor<32x32xf32>
  %c3 = stablehlo.slice %c [0:32, 32:64] : (tensor<64x64xf32>) -> tensor<32x32xf32>
  %r3 = stablehlo.add %s3, %c3 : tensor<32x32xf32>
  return %r0, %r1, %r2, %r3 : tensor<64x64xf32>, tensor<4096xf32>, tensor<65xf32>, tensor<32x32xf32>
}
