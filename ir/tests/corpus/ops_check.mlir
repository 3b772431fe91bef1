// The `check` dialect of StableHLO's interpreter tests (not registered in jaxlib, so
// only our own parser/printer round trips cover it).

// ----- check_ops
func.func @check_ops() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %2 = stablehlo.constant dense<[(1.0, 2.0)]> : tensor<1xcomplex<f64>>
  check.expect_eq %0, %0 : tensor<2xi64>
  check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi64>
  check.expect_almost_eq %1, %1 : tensor<2xf32>
  check.expect_almost_eq %1, %1, tolerance = 1.0e-03 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[0.999999, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %2, dense<(1.0, 2.0)> : tensor<1xcomplex<f64>>, tolerance = 1.0e-04
  check.expect_close %1, %1, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>
  check.expect_close %1, %1, max_ulp_difference = 3, min_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>
  check.expect_serialized_eq %0, probe_id = "probe0" : tensor<2xi64>
  check.expect_serialized_eq %0, probe_id = "probe1", iter = 2 : tensor<2xi64>
  func.return
}
