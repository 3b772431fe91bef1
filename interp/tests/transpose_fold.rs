//! Transposes folded into `dot_general` (the evaluator's region plans) give the values
//! the spec defines, whatever the uses of the transpose: expected values are worked out
//! by hand below.

use neuronc_interp::run_function_profiled;

mod common;

use common::{f32s, run_f32 as run};

/// x = [[1, 2], [3, 4]], w = [[1, 0], [2, 1]]: x · wᵀ = [[1, 4], [3, 10]],
/// wᵀ · x = [[7, 10], [3, 4]].
#[test]
fn folded_transpose_on_either_side_and_both() {
    let src = r#"
func.func @main(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %a = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = stablehlo.dot_general %t, %x, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = stablehlo.dot_general %t, %t, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a, %b, %c : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}"#;
    let x = f32s(&[2, 2], &[1., 2., 3., 4.]);
    let w = f32s(&[2, 2], &[1., 0., 2., 1.]);
    let out = run(src, vec![x, w]);
    assert_eq!(out[0], [1., 4., 3., 10.]);
    assert_eq!(out[1], [7., 10., 3., 4.]);
    // wᵀ · wᵀ = [[1, 2], [0, 1]]² = [[1, 4], [0, 1]].
    assert_eq!(out[2], [1., 4., 0., 1.]);
}

/// A transpose that is also returned is materialised, and the dot still sees it.
#[test]
fn transpose_with_other_uses_is_kept() {
    let src = r#"
func.func @main(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %a = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a, %t : tensor<2x2xf32>, tensor<2x2xf32>
}"#;
    let x = f32s(&[2, 2], &[1., 2., 3., 4.]);
    let w = f32s(&[2, 2], &[1., 0., 2., 1.]);
    let out = run(src, vec![x, w]);
    assert_eq!(out[0], [1., 4., 3., 10.]);
    assert_eq!(out[1], [1., 2., 0., 1.]);
}

/// A rank-3 transpose feeding a batched dot: y[b] = x[b]ᵀ · x[b] with x[b] = [[p, q]]
/// (1×2) gives [[p², pq], [pq, q²]].
#[test]
fn folded_transpose_with_batching_dims() {
    let src = r#"
func.func @main(%x: tensor<2x1x2xf32>) -> tensor<2x2x2xf32> {
  %t = stablehlo.transpose %x, dims = [0, 2, 1] : (tensor<2x1x2xf32>) -> tensor<2x2x1xf32>
  %y = stablehlo.dot_general %t, %x, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x1xf32>, tensor<2x1x2xf32>) -> tensor<2x2x2xf32>
  return %y : tensor<2x2x2xf32>
}"#;
    let x = f32s(&[2, 1, 2], &[1., 2., 3., -1.]);
    let out = run(src, vec![x]);
    assert_eq!(out[0], [1., 2., 2., 4., 9., -3., -3., 1.]);
}

/// The profile counts every executed op of the body (folded transposes do not run).
#[test]
fn profile_counts_executed_ops() {
    let src = r#"
func.func @main(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %a = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = stablehlo.add %a, %a : tensor<2x2xf32>
  %c = stablehlo.add %b, %a : tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}"#;
    let m = neuronc_ir::parse_module(src).expect("parses");
    let x = f32s(&[2, 2], &[1., 2., 3., 4.]);
    let w = f32s(&[2, 2], &[1., 0., 2., 1.]);
    let (out, prof) = run_function_profiled(&m, "main", vec![x, w]).expect("runs");
    assert_eq!(out[0].as_f32().expect("f32"), &[3., 12., 9., 30.]);
    let mut counts: Vec<(&str, u64)> = prof.rows().iter().map(|r| (r.kind, r.count)).collect();
    counts.sort();
    assert_eq!(counts, [("stablehlo.add", 2), ("stablehlo.dot_general", 1)]);
}
