//! XLA:CPU's algebraic simplifier changes two results the spec defines otherwise, and
//! `FloatSemantics::Xla` must follow it: `multiply(convert(pred), x)` is
//! `select(pred, x, 0)` (0, not NaN, where `pred` is false and `x` is infinite; torch_xla's
//! `scatter_reduce(amax)` backward depends on it) and `log(exp(x))` is `x` (no overflow to
//! inf or underflow to -inf). `FloatSemantics::Strict` keeps the spec's values. Expected
//! values are hand-derived (inf * 0 = NaN, select picks 0, exp(100) overflows f32 and f16,
//! exp(800) overflows f64); the same values were printed by XLA:CPU (jaxlib 0.10.2,
//! `tools/xla_run.py`) for these programs and inputs (XLA prints some zeros as -0).

mod common;

use common::run_with;
use neuronc_interp::{FloatSemantics, Tensor};

/// Programs where XLA rewrites: f32 in both operand orders (one through `not`), a broadcast
/// predicate, f16 and f64.
const PRED_MUL: &str = r#"
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4xf16>, tensor<4xf64>) {
  %p = stablehlo.compare EQ, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %z = stablehlo.constant dense<0.0> : tensor<4xf32>
  %inf = stablehlo.divide %b, %z : tensor<4xf32>
  %f = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf32>
  %0 = stablehlo.multiply %f, %inf : tensor<4xf32>
  %n = stablehlo.not %p : tensor<4xi1>
  %fn = stablehlo.convert %n : (tensor<4xi1>) -> tensor<4xf32>
  %1 = stablehlo.multiply %inf, %fn : tensor<4xf32>
  %z2 = stablehlo.constant dense<0.0> : tensor<2x4xf32>
  %minf = stablehlo.divide %m, %z2 : tensor<2x4xf32>
  %bf = stablehlo.broadcast_in_dim %f, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %2 = stablehlo.multiply %bf, %minf : tensor<2x4xf32>
  %h = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf16>
  %hinf = stablehlo.convert %inf : (tensor<4xf32>) -> tensor<4xf16>
  %3 = stablehlo.multiply %h, %hinf : tensor<4xf16>
  %d = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf64>
  %dinf = stablehlo.convert %inf : (tensor<4xf32>) -> tensor<4xf64>
  %4 = stablehlo.multiply %dinf, %d : tensor<4xf64>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4xf16>, tensor<4xf64>
}"#;

/// Programs where XLA keeps the NaN: bf16 (normalized to f32 first), a convert chain, a
/// reshape between convert and multiply, a constant predicate (folded first).
const KEEPS_NAN: &str = r#"
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %p = stablehlo.compare EQ, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %z = stablehlo.constant dense<0.0> : tensor<4xf32>
  %inf = stablehlo.divide %b, %z : tensor<4xf32>
  %h = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xbf16>
  %hinf = stablehlo.convert %inf : (tensor<4xf32>) -> tensor<4xbf16>
  %0 = stablehlo.multiply %h, %hinf : tensor<4xbf16>
  %i = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xi32>
  %fi = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xf32>
  %1 = stablehlo.multiply %fi, %inf : tensor<4xf32>
  %f = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf32>
  %r = stablehlo.reshape %f : (tensor<4xf32>) -> tensor<2x2xf32>
  %rinf = stablehlo.reshape %inf : (tensor<4xf32>) -> tensor<2x2xf32>
  %2 = stablehlo.multiply %r, %rinf : tensor<2x2xf32>
  %c = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %cf = stablehlo.convert %c : (tensor<4xi1>) -> tensor<4xf32>
  %3 = stablehlo.multiply %cf, %inf : tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xbf16>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
}"#;

const INF: f64 = f64::INFINITY;

/// a = (1, 2, 3, 4), b = (1, 5, 3, -7): pred = (T, F, T, F), b / 0 = (inf, inf, inf, -inf);
/// m / 0 alternates inf, -inf.
fn inputs(with_matrix: bool) -> Vec<Tensor> {
    let mut v = vec![
        Tensor::from_f32(&[4], &[1.0, 2.0, 3.0, 4.0]).expect("f32"),
        Tensor::from_f32(&[4], &[1.0, 5.0, 3.0, -7.0]).expect("f32"),
    ];
    if with_matrix {
        let m = [1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0];
        v.push(Tensor::from_f32(&[2, 4], &m).expect("f32"));
    }
    v
}

/// Equal as IEEE values, with NaN equal to NaN (and 0 to -0, as XLA:CPU prints either).
fn same(got: &[Vec<f64>], want: &[Vec<f64>]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            g.len() == w.len()
                && g.iter()
                    .zip(w)
                    .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
        })
}

#[test]
fn xla_semantics_select_where_the_predicate_is_false() {
    let got = run_with(PRED_MUL, inputs(true), FloatSemantics::Xla);
    let row = [INF, 0.0, INF, 0.0];
    let want = vec![
        row.to_vec(),
        vec![0.0, INF, 0.0, -INF],
        row.repeat(2),
        row.to_vec(),
        row.to_vec(),
    ];
    assert!(same(&got, &want), "got {got:?}");
}

#[test]
fn strict_semantics_keep_the_spec_nan() {
    let got = run_with(PRED_MUL, inputs(true), FloatSemantics::Strict);
    let n = f64::NAN;
    let row = [INF, n, INF, n];
    let want = vec![
        row.to_vec(),
        vec![n, INF, n, -INF],
        row.repeat(2),
        row.to_vec(),
        row.to_vec(),
    ];
    assert!(same(&got, &want), "got {got:?}");
}

#[test]
fn xla_semantics_keep_nan_where_xla_does_not_rewrite() {
    let got = run_with(KEEPS_NAN, inputs(false), FloatSemantics::Xla);
    let row = vec![INF, f64::NAN, INF, f64::NAN];
    let want = vec![row.clone(), row.clone(), row.clone(), row];
    assert!(same(&got, &want), "got {got:?}");
}

/// `log(exp(x))` in f32 (the exp also returned), f16 and f64; bf16 is not rewritten.
const LOG_EXP: &str = r#"
func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf16>, tensor<2xf64>, tensor<2xbf16>) {
  %e = stablehlo.exponential %x : tensor<2xf32>
  %0 = stablehlo.log %e : tensor<2xf32>
  %xh = stablehlo.convert %x : (tensor<2xf32>) -> tensor<2xf16>
  %eh = stablehlo.exponential %xh : tensor<2xf16>
  %1 = stablehlo.log %eh : tensor<2xf16>
  %yd = stablehlo.convert %y : (tensor<2xf32>) -> tensor<2xf64>
  %ed = stablehlo.exponential %yd : tensor<2xf64>
  %2 = stablehlo.log %ed : tensor<2xf64>
  %xb = stablehlo.convert %x : (tensor<2xf32>) -> tensor<2xbf16>
  %eb = stablehlo.exponential %xb : tensor<2xbf16>
  %3 = stablehlo.log %eb : tensor<2xbf16>
  return %e, %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf16>, tensor<2xf64>, tensor<2xbf16>
}"#;

/// x = (100, -200): exp overflows f32/f16/bf16 to inf and underflows to 0; y = (800, -800)
/// does the same in f64 (exp(709.8) is the largest finite double).
fn log_exp_inputs() -> Vec<Tensor> {
    vec![
        Tensor::from_f32(&[2], &[100.0, -200.0]).expect("f32"),
        Tensor::from_f32(&[2], &[800.0, -800.0]).expect("f32"),
    ]
}

#[test]
fn xla_semantics_fold_log_of_exp() {
    let got = run_with(LOG_EXP, log_exp_inputs(), FloatSemantics::Xla);
    let want = vec![
        vec![INF, 0.0],
        vec![100.0, -200.0],
        vec![100.0, -200.0],
        vec![800.0, -800.0],
        vec![INF, -INF],
    ];
    assert!(same(&got, &want), "got {got:?}");
    let strict = run_with(LOG_EXP, log_exp_inputs(), FloatSemantics::Strict);
    let spec = vec![
        vec![INF, 0.0],
        vec![INF, -INF],
        vec![INF, -INF],
        vec![INF, -INF],
        vec![INF, -INF],
    ];
    assert!(same(&strict, &spec), "got {strict:?}");
}
