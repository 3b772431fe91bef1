//! Shardy sharding annotations evaluate as identities, and `dot_general` contracts
//! operands of different element types. Expected values are worked out by hand.

mod common;

use common::{f32s, run_f32 as run};

/// x + constraint(reshard(x)) = 2x.
#[test]
fn sharding_annotations_are_identities() {
    let src = r#"
module @m {
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%x: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<2x2xf32> {
    %0 = sdy.reshard %x <@mesh, [{}, {"x"}]> : tensor<2x2xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<2x2xf32>
    %2 = stablehlo.add %x, %1 : tensor<2x2xf32>
    return %2 : tensor<2x2xf32>
  }
}"#;
    let out = run(src, vec![f32s(&[2, 2], &[1., -2., 3.5, 0.25])]);
    assert_eq!(out[0], [2., -4., 7., 0.5]);
}

/// a = [[1, 2, 0.5], [-3, 4, 1]] (exact in f8E4M3FN), b = [[2, 1], [0.5, -1], [4, 8]]
/// (exact in f8E5M2): a·b = [[1*2 + 2*0.5 + 0.5*4, 1 - 2 + 4], [-6 + 2 + 4, -3 - 4 + 8]]
/// = [[5, 3], [0, 1]].
#[test]
fn f8e4m3fn_times_f8e5m2_accumulates_in_the_result_type() {
    let src = r#"
func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %a = stablehlo.convert %x : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
  %b = stablehlo.convert %y : (tensor<3x2xf32>) -> tensor<3x2xf8E5M2>
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf8E4M3FN>, tensor<3x2xf8E5M2>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"#;
    let x = f32s(&[2, 3], &[1., 2., 0.5, -3., 4., 1.]);
    let y = f32s(&[3, 2], &[2., 1., 0.5, -1., 4., 8.]);
    assert_eq!(run(src, vec![x, y])[0], [5., 3., 0., 1.]);
}

/// Integer times float: a = [[1, -2], [3, 4]] as i8, b = [[0.5, 1], [0.25, -1]] f32:
/// a·b = [[0.5 - 0.5, 1 + 2], [1.5 + 1, 3 - 4]] = [[0, 3], [2.5, -1]]; and bf16 x f64
/// (different value classes) gives the same on the same values.
#[test]
fn integer_and_float_classes_mix() {
    let src = r#"
func.func @main(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %a = stablehlo.convert %x : (tensor<2x2xf32>) -> tensor<2x2xi8>
  %0 = stablehlo.dot_general %a, %y, contracting_dims = [1] x [0] : (tensor<2x2xi8>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %h = stablehlo.convert %x : (tensor<2x2xf32>) -> tensor<2x2xbf16>
  %d = stablehlo.convert %y : (tensor<2x2xf32>) -> tensor<2x2xf64>
  %1 = stablehlo.dot_general %h, %d, contracting_dims = [1] x [0] : (tensor<2x2xbf16>, tensor<2x2xf64>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}"#;
    let x = f32s(&[2, 2], &[1., -2., 3., 4.]);
    let y = f32s(&[2, 2], &[0.5, 1., 0.25, -1.]);
    let out = run(src, vec![x, y]);
    assert_eq!(out[0], [0., 3., 2.5, -1.]);
    assert_eq!(out[1], [0., 3., 2.5, -1.]);
}
