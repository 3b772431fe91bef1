//! `FloatSemantics::Xla` against XLA:CPU, `FloatSemantics::Strict` against the StableHLO
//! spec, on small bf16 programs whose results are hand-derived (bf16 has 8 significant
//! bits: 1 + 2^-7 is the successor of 1, ties round to even). The same values were
//! printed by XLA:CPU (jax 0.10.2, `tools/xla_run.py`) for these programs and inputs; the
//! last test re-runs that oracle when a python with jaxlib is available.

mod common;

use common::run_with;
use neuronc_interp::{npz, FloatSemantics, Tensor};
use neuronc_ir::ElemType;
use std::path::PathBuf;
use std::process::Command;

const ONE_ULP: f64 = 1.0 / 128.0; // 2^-7, the bf16 spacing in [1, 2)
const A: f64 = 1.0 + ONE_ULP;

const CHAIN: &str = r#"
func.func @main(%a: tensor<2xbf16>, %b: tensor<2xbf16>, %c: tensor<2xbf16>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xbf16>) {
  %m = stablehlo.multiply %a, %b : tensor<2xbf16>
  %mc = stablehlo.convert %m : (tensor<2xbf16>) -> tensor<2xf32>
  %s = stablehlo.add %m, %c : tensor<2xbf16>
  %sc = stablehlo.convert %s : (tensor<2xbf16>) -> tensor<2xf32>
  return %mc, %sc, %m : tensor<2xf32>, tensor<2xf32>, tensor<2xbf16>
}"#;

const REPRO: &str = r#"
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xbf16>
  %1 = stablehlo.convert %b : (tensor<2xf32>) -> tensor<2xbf16>
  %2 = stablehlo.multiply %0, %1 : tensor<2xbf16>
  %3 = stablehlo.convert %2 : (tensor<2xbf16>) -> tensor<2xf32>
  return %3 : tensor<2xf32>
}"#;

const LOOP: &str = r#"
func.func @main(%x: tensor<bf16>, %b: tensor<bf16>) -> (tensor<f32>, tensor<f32>) {
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r:3 = stablehlo.while(%i = %i0, %v = %x, %w = %z) : tensor<i32>, tensor<bf16>, tensor<f32>
    cond {
      %n = stablehlo.constant dense<2> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %v1 = stablehlo.multiply %v, %b : tensor<bf16>
      %w1 = stablehlo.convert %v1 : (tensor<bf16>) -> tensor<f32>
      stablehlo.return %i1, %v1, %w1 : tensor<i32>, tensor<bf16>, tensor<f32>
    }
  %c = stablehlo.convert %r#1 : (tensor<bf16>) -> tensor<f32>
  return %c, %r#2 : tensor<f32>, tensor<f32>
}"#;

const SUM: &str = r#"
func.func @main(%x: tensor<4xbf16>, %y: tensor<64xbf16>) -> (tensor<f32>, tensor<f32>) {
  %z = stablehlo.constant dense<0.0> : tensor<bf16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xbf16>, tensor<bf16>) -> tensor<bf16>
  %rc = stablehlo.convert %r : (tensor<bf16>) -> tensor<f32>
  %t = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [0] : (tensor<64xbf16>, tensor<bf16>) -> tensor<bf16>
  %tc = stablehlo.convert %t : (tensor<bf16>) -> tensor<f32>
  return %rc, %tc : tensor<f32>, tensor<f32>
}"#;

const CALL: &str = r#"
func.func @main(%a: tensor<2xbf16>, %b: tensor<2xbf16>) -> tensor<2xf32> {
  %m = func.call @mul(%a, %b) : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  %c = stablehlo.convert %m : (tensor<2xbf16>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func private @mul(%a: tensor<2xbf16>, %b: tensor<2xbf16>) -> tensor<2xbf16> {
  %m = stablehlo.multiply %a, %b : tensor<2xbf16>
  return %m : tensor<2xbf16>
}"#;

/// The form `opt` gives a relayout that the NeuronCore layout plan places between a bf16
/// op and its convert to f32: an identity composite. XLA inlines it, so the convert still
/// reads the unrounded product.
const RELAYOUT: &str = r#"
func.func @main(%a: tensor<2xbf16>, %b: tensor<2xbf16>) -> tensor<2xf32> {
  %m = stablehlo.multiply %a, %b : tensor<2xbf16>
  %r = stablehlo.composite "neuronc.relayout" %m {composite_attributes = {from = 0 : i64, to = -1 : i64, bytes = 4 : i64}, decomposition = @relayout0} : (tensor<2xbf16>) -> tensor<2xbf16>
  %c = stablehlo.convert %r : (tensor<2xbf16>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func private @relayout0(%v: tensor<2xbf16>) -> tensor<2xbf16> {
  return %v : tensor<2xbf16>
}"#;

/// bf16 dots whose rows are (1, 2^-9) and whose other operand is all ones, each read by a
/// convert to f32: plain 2-D, a rank-3 lhs without batch dimensions, a leading batch
/// dimension, a batch dimension that is not leading, and a size-1 batch dimension. XLA:CPU
/// rewrites the second, fourth and fifth into `reshape(dot)` (`DotDecomposer`,
/// `BatchDotSimplification`), so their converts read a rounded bf16 value.
const DOTS: &str = r#"
func.func @main(%a: tensor<2x2xbf16>, %b: tensor<2x2xbf16>, %a3: tensor<2x2x2xbf16>, %b3: tensor<2x2x2xbf16>, %a1: tensor<1x2x2xbf16>, %b1: tensor<1x2x2xbf16>) -> (tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<1x2x2xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
  %1 = stablehlo.dot_general %a3, %b, contracting_dims = [2] x [0] : (tensor<2x2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2x2xbf16>
  %2 = stablehlo.dot_general %a3, %b3, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x2xbf16>, tensor<2x2x2xbf16>) -> tensor<2x2x2xbf16>
  %3 = stablehlo.dot_general %a3, %b3, batching_dims = [1] x [0], contracting_dims = [2] x [1] : (tensor<2x2x2xbf16>, tensor<2x2x2xbf16>) -> tensor<2x2x2xbf16>
  %4 = stablehlo.dot_general %a1, %b1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<1x2x2xbf16>, tensor<1x2x2xbf16>) -> tensor<1x2x2xbf16>
  %c0 = stablehlo.convert %0 : (tensor<2x2xbf16>) -> tensor<2x2xf32>
  %c1 = stablehlo.convert %1 : (tensor<2x2x2xbf16>) -> tensor<2x2x2xf32>
  %c2 = stablehlo.convert %2 : (tensor<2x2x2xbf16>) -> tensor<2x2x2xf32>
  %c3 = stablehlo.convert %3 : (tensor<2x2x2xbf16>) -> tensor<2x2x2xf32>
  %c4 = stablehlo.convert %4 : (tensor<1x2x2xbf16>) -> tensor<1x2x2xf32>
  return %c0, %c1, %c2, %c3, %c4 : tensor<2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<1x2x2xf32>
}"#;

fn dots_inputs() -> Vec<Tensor> {
    let t = 2f64.powi(-9);
    let rows = |n: usize| [1.0, t].repeat(n);
    vec![
        bf16(&[2, 2], &rows(2)),
        bf16(&[2, 2], &[1.0; 4]),
        bf16(&[2, 2, 2], &rows(4)),
        bf16(&[2, 2, 2], &[1.0; 8]),
        bf16(&[1, 2, 2], &rows(2)),
        bf16(&[1, 2, 2], &[1.0; 4]),
    ]
}

fn bf16(shape: &[i64], v: &[f64]) -> Tensor {
    Tensor::from_f64_as(ElemType::BF16, shape, v).expect("valid bf16 tensor")
}

fn chain_inputs() -> Vec<Tensor> {
    let p = 2f64.powi(-10);
    vec![
        bf16(&[2], &[A, 1.5]),
        bf16(&[2], &[A, A]),
        bf16(&[2], &[p, p]),
    ]
}

#[test]
fn bf16_product_read_as_f32_keeps_f32_precision_under_xla_only() {
    // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 exactly; bf16 rounds the 2^-14 away. 1.5 * A =
    // 1.5 + 1.5 ulp ties to the even neighbour 1.5 + 2 ulp.
    let exact = 1.0 + 2f64.powi(-6) + 2f64.powi(-14);
    let rounded = 1.0 + 2f64.powi(-6);
    let xla = run_with(CHAIN, chain_inputs(), FloatSemantics::Xla);
    let strict = run_with(CHAIN, chain_inputs(), FloatSemantics::Strict);
    assert_eq!(xla[0], vec![exact, 1.5 * A]);
    assert_eq!(strict[0], vec![rounded, 1.5 + 2.0 * ONE_ULP]);
    // The bf16 result itself is rounded in both semantics.
    assert_eq!(xla[2], vec![rounded, 1.5 + 2.0 * ONE_ULP]);
    assert_eq!(strict[2], xla[2]);
}

#[test]
fn values_between_two_bf16_ops_are_rounded_under_xla() {
    // add reads the rounded product (1 + 2^-6), and only the add is left unrounded.
    let p = 2f64.powi(-10);
    let xla = run_with(CHAIN, chain_inputs(), FloatSemantics::Xla);
    let m = [1.0 + 2.0 * ONE_ULP, 1.5 + 2.0 * ONE_ULP];
    assert_eq!(xla[1], vec![m[0] + p, m[1] + p]);
    let strict = run_with(CHAIN, chain_inputs(), FloatSemantics::Strict);
    assert_eq!(strict[1], m.to_vec());
}

#[test]
fn dots_xla_rewrites_are_rounded_before_the_convert() {
    // 1 + 2^-9 is exact in f32; bf16 (spacing 2^-7 at 1) rounds it to 1.
    let exact = 1.0 + 2f64.powi(-9);
    let (e, r) = (exact, 1.0);
    let want = [(e, 4), (r, 8), (e, 8), (r, 8), (r, 4)];
    let xla = run_with(DOTS, dots_inputs(), FloatSemantics::Xla);
    for (i, &(v, n)) in want.iter().enumerate() {
        assert_eq!(xla[i], vec![v; n], "dot {i}");
    }
    let strict = run_with(DOTS, dots_inputs(), FloatSemantics::Strict);
    for (i, &(_, n)) in want.iter().enumerate() {
        assert_eq!(strict[i], vec![1.0; n], "dot {i} (strict)");
    }
}

#[test]
fn explicit_f32_to_bf16_conversion_still_rounds_under_xla() {
    // 1.01 rounds to 1 + 2^-7 in bf16; the product of the rounded inputs is exact in f32.
    // 3 * A = 3 + 1.5 ulp (ulp 2^-6 in [2, 4)) ties to 3 + 2 ulp.
    let inputs = || {
        vec![
            Tensor::from_f32(&[2], &[1.01, 3.0]).expect("f32"),
            Tensor::from_f32(&[2], &[1.01, 1.01]).expect("f32"),
        ]
    };
    let xla = run_with(REPRO, inputs(), FloatSemantics::Xla);
    assert_eq!(xla[0], vec![A * A, 3.0 * A]);
    let strict = run_with(REPRO, inputs(), FloatSemantics::Strict);
    assert_eq!(strict[0], vec![1.0 + 2f64.powi(-6), 3.0 + 2f64.powi(-5)]);
}

#[test]
fn while_carry_is_rounded_at_the_loop_boundary() {
    let inputs = || vec![bf16(&[], &[A]), bf16(&[], &[A])];
    // Iteration 1: A*A = 1 + 2^-6 + 2^-14 -> carry 1 + 2^-6. Iteration 2: (1 + 2^-6) * A
    // = 1 + 3*2^-7 + 2^-13 -> carry 1 + 3*2^-7; the convert inside the body sees the
    // unrounded product under Xla.
    let second = (1.0 + 2f64.powi(-6)) * A;
    let xla = run_with(LOOP, inputs(), FloatSemantics::Xla);
    assert_eq!(xla, vec![vec![1.0 + 3.0 * ONE_ULP], vec![second]]);
    let strict = run_with(LOOP, inputs(), FloatSemantics::Strict);
    assert_eq!(
        strict,
        vec![vec![1.0 + 3.0 * ONE_ULP], vec![1.0 + 3.0 * ONE_ULP]]
    );
}

#[test]
fn bf16_sums_round_every_step_in_xla_tree_order() {
    let e = 2f64.powi(-8); // half a bf16 ulp at 1: 1 + e ties to even, back to 1
    let mut y = vec![e; 64];
    y[0] = 1.0;
    let inputs = || vec![bf16(&[4], &[1.0, e, e, e]), bf16(&[64], &y)];
    // Sequential: 1 + e + e + e stays 1. 64 elements: windows of 32 -> 1 and 32e = 1/8,
    // then 1 + 1/8.
    let xla = run_with(SUM, inputs(), FloatSemantics::Xla);
    assert_eq!(xla, vec![vec![1.0], vec![1.125]]);
    // Strict keeps the interpreter's wide accumulation, rounded once.
    let strict = run_with(SUM, inputs(), FloatSemantics::Strict);
    assert_eq!(strict[0], vec![1.0 + 2.0 * ONE_ULP]);
}

#[test]
fn calls_do_not_materialize_bf16_under_xla() {
    let inputs = || vec![bf16(&[2], &[A, 1.5]), bf16(&[2], &[A, A])];
    let xla = run_with(CALL, inputs(), FloatSemantics::Xla);
    assert_eq!(xla[0], vec![A * A, 1.5 * A]);
    let strict = run_with(CALL, inputs(), FloatSemantics::Strict);
    assert_eq!(strict[0], vec![1.0 + 2f64.powi(-6), 1.5 + 2.0 * ONE_ULP]);
}

#[test]
fn relayouts_do_not_materialize_bf16_under_xla() {
    let inputs = || vec![bf16(&[2], &[A, 1.5]), bf16(&[2], &[A, A])];
    let xla = run_with(RELAYOUT, inputs(), FloatSemantics::Xla);
    assert_eq!(xla[0], vec![A * A, 1.5 * A]);
    let strict = run_with(RELAYOUT, inputs(), FloatSemantics::Strict);
    assert_eq!(strict[0], vec![1.0 + 2f64.powi(-6), 1.5 + 2.0 * ONE_ULP]);
}

#[test]
fn modules_without_bf16_are_not_copied() {
    let m = neuronc_ir::parse_module(
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}",
    )
    .expect("parses");
    let out = neuronc_interp::excess_precision::xla_module(&m);
    assert!(matches!(out, std::borrow::Cow::Borrowed(_)));
}

fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NEURONC_PYTHON") {
        let p = PathBuf::from(p);
        return p.exists().then_some(p);
    }
    let p = PathBuf::from("/work/venv/bin/python");
    p.exists().then_some(p)
}

/// Runs `src` on XLA:CPU through `tools/xla_run.py`.
fn xla_oracle(py: &PathBuf, name: &str, src: &str, inputs: &[Tensor]) -> Vec<Vec<f64>> {
    let dir = std::env::temp_dir().join(format!("neuronc_excess_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (prog, ins, outs) = (dir.join("p.mlir"), dir.join("in.npz"), dir.join("out.npz"));
    std::fs::write(&prog, src).expect("write program");
    let items: Vec<(String, &Tensor)> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| (npz::arg_key(i), t))
        .collect();
    npz::write_npz(&ins, &items).expect("write inputs");
    let tool = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tools/xla_run.py");
    let st = Command::new(py)
        .arg(&tool)
        .arg(&prog)
        .arg("--inputs")
        .arg(&ins)
        .arg("--output")
        .arg(&outs)
        .status()
        .expect("python runs");
    assert!(st.success(), "xla_run.py failed on {name}");
    let arrays = npz::read_npz(&outs).expect("read outputs");
    let m = neuronc_ir::parse_module(src).expect("parses");
    let f = m.func("main").expect("main");
    let mut got = Vec::new();
    for (i, &ty) in f.result_types.iter().enumerate() {
        let key = npz::out_key(i);
        let tt = m.types.tensor_of(ty).expect("tensor result");
        let (_, a) = arrays.iter().find(|(k, _)| *k == key).expect("output");
        got.push(a.to_tensor(&key, Some(tt)).expect("typed").to_f64_vec());
    }
    let _ = std::fs::remove_dir_all(&dir);
    got
}

#[test]
fn xla_semantics_match_xla_cpu_bit_for_bit() {
    let Some(py) = python() else {
        println!("no python with jaxlib (NEURONC_PYTHON, /work/venv): oracle test skipped");
        return;
    };
    let e = 2f64.powi(-8);
    let mut y = vec![e; 64];
    y[0] = 1.0;
    let cases: Vec<(&str, &str, Vec<Tensor>)> = vec![
        ("chain", CHAIN, chain_inputs()),
        (
            "repro",
            REPRO,
            vec![
                Tensor::from_f32(&[2], &[1.01, 3.0]).expect("f32"),
                Tensor::from_f32(&[2], &[1.01, 1.01]).expect("f32"),
            ],
        ),
        ("loop", LOOP, vec![bf16(&[], &[A]), bf16(&[], &[A])]),
        (
            "sum",
            SUM,
            vec![bf16(&[4], &[1.0, e, e, e]), bf16(&[64], &y)],
        ),
        ("dots", DOTS, dots_inputs()),
        (
            "call",
            CALL,
            vec![bf16(&[2], &[A, 1.5]), bf16(&[2], &[A, A])],
        ),
        (
            "relayout",
            RELAYOUT,
            vec![bf16(&[2], &[A, 1.5]), bf16(&[2], &[A, A])],
        ),
    ];
    for (name, src, inputs) in cases {
        let want = xla_oracle(&py, name, src, &inputs);
        let got = run_with(src, inputs, FloatSemantics::Xla);
        assert_eq!(got, want, "{name}: Xla semantics differ from XLA:CPU");
    }
}
