// Ops newer than the StableHLO that jaxlib bundles (so jaxlib_roundtrip skips this file;
// only our own parser, verifier and printer round trips cover it).

// ----- collective_reduce
func.func public @collective_reduce(%x: tensor<4x2xf32>, %y: tensor<3xf32>, %root: tensor<2xi32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<3xf32>) {
  %0 = "stablehlo.collective_reduce"(%x) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1:2 = "stablehlo.collective_reduce"(%x, %y, %root) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, has_dynamic_root, replica_groups = dense<[[0]]> : tensor<1x1xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4x2xf32>, tensor<3xf32>, tensor<2xi32>) -> (tensor<4x2xf32>, tensor<3xf32>)
  return %0, %1#0, %1#1 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<3xf32>
}
