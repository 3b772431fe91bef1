//! f16 `batch_norm_training` under `FloatSemantics::Xla` follows XLA:CPU's f16 expansion
//! (`mean = Σx * 1/N`, `var = Σ(x*x) * 1/N - mean*mean`, every step rounded to f16), under
//! `FloatSemantics::Strict` the spec's formulas. Expected values are hand-derived below (f16
//! has 11 significant bits: spacing 1 in [1024, 2048), 2 in [2048, 4096), 8 in
//! [8192, 16384)); XLA:CPU (jaxlib 0.10.2, `tools/xla_run.py`) printed the same values for
//! these programs and inputs, and the interpreter's f64 formula (before this rule) printed
//! the strict ones under `Xla` too.

mod common;

use common::run_with;
use neuronc_interp::{FloatSemantics, Tensor};
use neuronc_ir::ElemType;

const BN: &str = r#"
func.func @main(%x: tensor<1x4xf16>, %s: tensor<1xf16>, %o: tensor<1xf16>) -> (tensor<1x4xf16>, tensor<1xf16>, tensor<1xf16>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 0 : i64} : (tensor<1x4xf16>, tensor<1xf16>, tensor<1xf16>) -> (tensor<1x4xf16>, tensor<1xf16>, tensor<1xf16>)
  return %0#0, %0#1, %0#2 : tensor<1x4xf16>, tensor<1xf16>, tensor<1xf16>
}"#;

fn f16(shape: &[i64], v: &[f64]) -> Tensor {
    Tensor::from_f64_as(ElemType::F16, shape, v).expect("valid f16 tensor")
}

fn inputs(x: &[f64]) -> Vec<Tensor> {
    vec![f16(&[1, 4], x), f16(&[1], &[1.0]), f16(&[1], &[0.0])]
}

#[test]
fn f16_variance_cancels_in_f16_under_xla() {
    let x = [60.0, 60.5, 61.0, 61.5];
    // Σx = 243 (exact), mean = 243 * 0.25 = 60.75. Squares rounded to f16 (spacing 2):
    // 3600, 3660.25 -> 3660, 3721 -> 3720 (tie, even), 3782.25 -> 3782; their f16 sum
    // 7260, 10980 -> 10976 (spacing 8, tie, even), 14758 -> 14760; * 0.25 = 3690.
    // mean² = 3690.5625 -> 3690, so var = 0 (the spec's is 0.3125).
    // rsqrt(f16(1e-3) = 0.00100040..) = 31.616.. -> 31.609375 (spacing 2^-6);
    // y = (x - mean) * 31.609375: -0.75 -> -23.70703125 -> -23.703125, -0.25 -> -7.90234375.
    let xla = run_with(BN, inputs(&x), FloatSemantics::Xla);
    assert_eq!(xla[0], vec![-23.703125, -7.90234375, 7.90234375, 23.703125]);
    assert_eq!(xla[1], vec![60.75]);
    assert_eq!(xla[2], vec![0.0]);
    let strict = run_with(BN, inputs(&x), FloatSemantics::Strict);
    assert_eq!(strict[1], vec![60.75]);
    assert_eq!(strict[2], vec![0.3125]);
    // (x - mean) / sqrt(0.3125 + 0.001) = -0.75 / 0.5599.. = -1.3395.. -> f16 -1.33984375.
    assert_eq!(strict[0][0], -1.33984375);
}

#[test]
fn f16_squares_overflow_under_xla() {
    let x = [1000.0, 1001.0, 1002.0, 1003.0];
    // x*x > 65504 is inf in f16, so Σ(x*x) = inf and var = inf - mean² = NaN, y = NaN.
    // Σx in f16: 2001, 3003 -> 3004 (spacing 2, tie, even), 4007 -> 4008 (tie, even);
    // mean = 4008 * 0.25 = 1002 (the spec's is 1001.5).
    let xla = run_with(BN, inputs(&x), FloatSemantics::Xla);
    assert!(xla[0].iter().all(|v| v.is_nan()), "{:?}", xla[0]);
    assert_eq!(xla[1], vec![1002.0]);
    assert!(xla[2][0].is_nan());
    let strict = run_with(BN, inputs(&x), FloatSemantics::Strict);
    assert_eq!(strict[1], vec![1001.5]);
    assert_eq!(strict[2], vec![1.25]);
}

#[test]
fn bf16_batch_norm_is_not_expanded() {
    // XLA:CPU normalizes a bf16 batch norm to f32 (one rounding): the same inputs give the
    // spec's mean and variance under both semantics.
    let src = BN.replace("f16", "bf16");
    let ins = |x: &[f64]| {
        [&[1, 4][..], &[1], &[1]]
            .iter()
            .zip([x, &[1.0][..], &[0.0]])
            .map(|(s, v)| Tensor::from_f64_as(ElemType::BF16, s, v).expect("valid bf16 tensor"))
            .collect::<Vec<_>>()
    };
    let x = [60.0, 60.5, 61.0, 61.5];
    let xla = run_with(&src, ins(&x), FloatSemantics::Xla);
    assert_eq!(xla[1], vec![60.75]);
    assert_eq!(xla[2], vec![0.3125]);
}
