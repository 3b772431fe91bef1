//! XLA:CPU's algebraic simplifier changes results the spec defines otherwise, and
//! `FloatSemantics::Xla` must follow it: `multiply(convert(pred), x)` is
//! `select(pred, x, 0)` (0, not NaN, where `pred` is false and `x` is infinite; torch_xla's
//! `scatter_reduce(amax)` backward depends on it) and `log(exp(x))` is `x` (no overflow to
//! inf or underflow to -inf); `x / constant` is `x * (1 / constant)`, `x / broadcast(b)` of a
//! single-use `b` is `x * broadcast(1 / b)` and f16 `logistic(x)` is `1 / (1 + exp(-x))` in
//! f16 ops (all round differently from the spec's single op).
//! `FloatSemantics::Strict` keeps the spec's values. Expected
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

/// Divides by a splat f16 constant, a broadcast f32 scalar constant and a non-splat f64
/// constant (rewritten by XLA into products with the reciprocal), and by an argument
/// holding the same values (not rewritten).
const DIV_CONST: &str = r#"
func.func @main(%x: tensor<3xf32>, %y: tensor<2xf32>) -> (tensor<3xf16>, tensor<2xf32>, tensor<2xf64>, tensor<3xf16>) {
  %h = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf16>
  %six = stablehlo.constant dense<6.0> : tensor<3xf16>
  %0 = stablehlo.divide %h, %six : tensor<3xf16>
  %three = stablehlo.constant dense<3.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %three, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %1 = stablehlo.divide %y, %b : tensor<2xf32>
  %d = stablehlo.slice %x [0:2] : (tensor<3xf32>) -> tensor<2xf32>
  %dd = stablehlo.convert %d : (tensor<2xf32>) -> tensor<2xf64>
  %c = stablehlo.constant dense<[3.0, 6.0]> : tensor<2xf64>
  %2 = stablehlo.divide %dd, %c : tensor<2xf64>
  %s = stablehlo.slice %x [2:3] : (tensor<3xf32>) -> tensor<1xf32>
  %s2 = stablehlo.add %s, %s : tensor<1xf32>
  %s3 = stablehlo.reshape %s2 : (tensor<1xf32>) -> tensor<f32>
  %bs = stablehlo.broadcast_in_dim %s3, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %hs = stablehlo.convert %bs : (tensor<3xf32>) -> tensor<3xf16>
  %3 = stablehlo.divide %h, %hs : tensor<3xf16>
  return %0, %1, %2, %3 : tensor<3xf16>, tensor<2xf32>, tensor<2xf64>, tensor<3xf16>
}"#;

/// XLA:CPU rewrites `x / C` into `x * (1 / C)` with the reciprocal rounded to the element
/// type (f16, f32, f64). Hand derivation, x = (5, 7, 3), y = (5, 1):
/// * f16: 1/6 rounds to 1365/8192. 5 * 1365/8192 = 1706.5/2048 ties to even 1706/2048 =
///   0.8330078125 (the quotient 5/6 rounds to 1707/2048 = 0.83349609375);
///   7 * 1365/8192 = 1194.23/1024 -> 1194/1024 = 1.166015625 (quotient 1195/1024);
///   3 * 1365/8192 = 2047.5/4096 ties to even 0.5 (the quotient is 0.5).
/// * f32: 1/3 rounds to 0.3333333432674408; 5 times it is 1.66666671634 -> f32
///   1.6666667461395264 (the quotient 5/3 rounds to 1.6666666269302368); 1 times it is itself.
/// * f64: 5 * fl(1/3) = 1.66666666666666657 -> 1.6666666666666665 (quotient
///   1.6666666666666667); 7 * fl(1/6) -> 1.1666666666666665 (quotient 1.1666666666666667).
/// * `%3` divides by a computed 6 (2 * x[2], not a constant): the correctly rounded quotients.
///
/// XLA:CPU (jaxlib 0.10.2, `tools/xla_run.py`) printed the same values for this program.
#[test]
fn xla_semantics_divide_by_constant_is_a_reciprocal_product() {
    let inputs = || {
        vec![
            Tensor::from_f32(&[3], &[5.0, 7.0, 3.0]).expect("f32"),
            Tensor::from_f32(&[2], &[5.0, 1.0]).expect("f32"),
        ]
    };
    let quotient16 = vec![0.83349609375, 1.1669921875, 0.5];
    let got = run_with(DIV_CONST, inputs(), FloatSemantics::Xla);
    let want = vec![
        vec![0.8330078125, 1.166015625, 0.5],
        vec![1.6666667461395264, 0.3333333432674408],
        vec![1.6666666666666665, 1.1666666666666665],
        quotient16.clone(),
    ];
    assert!(same(&got, &want), "got {got:?}");
    let strict = run_with(DIV_CONST, inputs(), FloatSemantics::Strict);
    let spec = vec![
        quotient16.clone(),
        vec![1.6666666269302368, 0.3333333432674408],
        vec![1.6666666666666667, 1.1666666666666667],
        quotient16,
    ];
    assert!(same(&strict, &spec), "got {strict:?}");
}

const LOGISTIC_F16: &str = r#"
func.func @main(%x: tensor<3xf32>) -> tensor<3xf16> {
  %h = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf16>
  %0 = stablehlo.logistic %h : tensor<3xf16>
  return %0 : tensor<3xf16>
}"#;

/// XLA:CPU expands f16 `logistic(x)` into `1 / (1 + exp(-x))`, each op rounded to f16.
/// Hand derivation, x = (-1, -3, 0):
/// * exp(1) = 2.71828 -> f16 1392/512 = 2.71875; 1 + it = 3.71875 (exact); 1 / 3.71875 =
///   0.268907 = 1101.46/4096 -> 1101/4096 = 0.268798828125. The correctly rounded
///   logistic(-1) = 0.2689414 = 1101.60/4096 -> 1102/4096 = 0.26904296875.
/// * exp(3) = 20.0855 -> 1285/64 = 20.078125; + 1 = 21.078125; 1 / 21.078125 = 0.0474426
///   = 1554.60/32768 -> 1555/32768 = 0.047454833984375; correctly rounded logistic(-3) =
///   0.0474259 = 1554.05/32768 -> 1554/32768 = 0.04742431640625.
/// * logistic(0) = 1 / (1 + 1) = 0.5 either way.
///
/// XLA:CPU (jaxlib 0.10.2, `tools/xla_run.py`) printed the same values for this program.
#[test]
fn xla_semantics_f16_logistic_is_an_f16_op_chain() {
    let x = || vec![Tensor::from_f32(&[3], &[-1.0, -3.0, 0.0]).expect("f32")];
    let got = run_with(LOGISTIC_F16, x(), FloatSemantics::Xla);
    assert!(
        same(&got, &[vec![0.268798828125, 0.047454833984375, 0.5]]),
        "got {got:?}"
    );
    let strict = run_with(LOGISTIC_F16, x(), FloatSemantics::Strict);
    assert!(
        same(&strict, &[vec![0.26904296875, 0.04742431640625, 0.5]]),
        "got {strict:?}"
    );
}

/// Divides by `broadcast_in_dim`s of non-constant values. XLA:CPU rewrites `A / broadcast(B)`
/// into `A * broadcast(1 / B)` when `B` has one use: `%0` (f32 scalar `%s`), `%1` (f16 vector
/// `%v` broadcast along the minor axis, dividend itself a broadcast) and `%2` (f64 scalar
/// `%d`). It does not rewrite `%3`, the second divide by the broadcast of `%s` (the first
/// rewrite gave `%s` a second use), `%4`, a divide by an identity broadcast of `%t`, nor
/// `%5`, a broadcast of `%t`, which has two uses.
const DIV_BCAST: &str = r#"
func.func @main(%x: tensor<3xf32>, %s: tensor<f32>, %v: tensor<2xf16>, %d: tensor<f64>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3x2xf16>, tensor<2xf64>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %0 = stablehlo.divide %x, %b : tensor<3xf32>
  %h = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xf16>
  %hb = stablehlo.broadcast_in_dim %h, dims = [0] : (tensor<3xf16>) -> tensor<3x2xf16>
  %vb = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<2xf16>) -> tensor<3x2xf16>
  %1 = stablehlo.divide %hb, %vb : tensor<3x2xf16>
  %xs = stablehlo.slice %x [0:2] : (tensor<3xf32>) -> tensor<2xf32>
  %xd = stablehlo.convert %xs : (tensor<2xf32>) -> tensor<2xf64>
  %db = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f64>) -> tensor<2xf64>
  %2 = stablehlo.divide %xd, %db : tensor<2xf64>
  %c = stablehlo.constant dense<[5.0, 7.0, 3.0]> : tensor<3xf32>
  %3 = stablehlo.divide %c, %b : tensor<3xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [0] : (tensor<3xf32>) -> tensor<3xf32>
  %4 = stablehlo.divide %x, %tb : tensor<3xf32>
  %xb = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %tb2 = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %5 = stablehlo.divide %xb, %tb2 : tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<3x2xf16>, tensor<2xf64>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>
}"#;

/// Hand derivation, x = (5, 7, 3), s = 3, v = (6, 3), d = 3, t = (3, 3, 3):
/// * f32: fl(1/3) = 0.3333333432674408; 5 * it = 1.66666671634 -> 1.6666667461395264 (the
///   quotient 5/3 rounds to 1.6666666269302368); 7 * it = 2.33333340287 -> 2.3333334922790527
///   (quotient 2.3333332538604736); 3 * it = 1.0000000298 -> 1.0.
/// * f16: fl(1/6) = 1365/8192, fl(1/3) = 1365/4096. 5/6: 0.8330078125 (see
///   `xla_semantics_divide_by_constant_is_a_reciprocal_product`); 5 * 1365/4096 = 1706.25/1024
///   -> 1.666015625 (quotient 1707/1024); 7/6: 1.166015625; 7 * 1365/4096 = 1194.375/512 ->
///   2.33203125 (quotient 1195/512); 3/6: 0.5; 3 * 1365/4096 = 2047.5/2048 ties to even 1.0.
/// * f64: 5 * fl(1/3) -> 1.6666666666666665; 7 * fl(1/3) = 2.33333333333333320 ->
///   2.333333333333333 (quotient 2.3333333333333335).
/// * `%3`, `%4`, `%5`: the correctly rounded f32 quotients.
///
/// XLA:CPU (jaxlib 0.10.2, `tools/xla_run.py`) printed the same values for this program.
#[test]
fn xla_semantics_divide_by_a_broadcast_of_a_single_use_value_is_a_reciprocal_product() {
    let inputs = || {
        vec![
            Tensor::from_f32(&[3], &[5.0, 7.0, 3.0]).expect("f32"),
            Tensor::from_f32(&[], &[3.0]).expect("f32"),
            Tensor::from_f64_as(neuronc_ir::ElemType::F16, &[2], &[6.0, 3.0]).expect("f16"),
            Tensor::from_f64(&[], &[3.0]).expect("f64"),
            Tensor::from_f32(&[3], &[3.0, 3.0, 3.0]).expect("f32"),
        ]
    };
    let quot = vec![1.6666666269302368, 2.3333332538604736, 1.0];
    let got = run_with(DIV_BCAST, inputs(), FloatSemantics::Xla);
    let want = vec![
        vec![1.6666667461395264, 2.3333334922790527, 1.0],
        vec![0.8330078125, 1.666015625, 1.166015625, 2.33203125, 0.5, 1.0],
        vec![1.6666666666666665, 2.333333333333333],
        quot.clone(),
        quot.clone(),
        quot.repeat(2),
    ];
    assert!(same(&got, &want), "got {got:?}");
    let strict = run_with(DIV_BCAST, inputs(), FloatSemantics::Strict);
    let spec = vec![
        quot.clone(),
        vec![
            0.83349609375,
            1.6669921875,
            1.1669921875,
            2.333984375,
            0.5,
            1.0,
        ],
        vec![1.6666666666666667, 2.3333333333333335],
        quot.clone(),
        quot.clone(),
        quot.repeat(2),
    ];
    assert!(same(&strict, &spec), "got {strict:?}");
}
