//! Numerics of `decompose-batch-norm`: the expansion must compute what the interpreter's
//! native `batch_norm_*` kernels compute (f64 per feature, rounded once), on deterministic
//! pseudo-random inputs, and a hand-derived case.

use neuronc_interp::{arg_types, compare, run_function, RunOptions, Tensor};
use neuronc_ir::{parse::split_input, parse_module, verify_module, ElemType, Module};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

const FIXTURE: &str = include_str!("../../fixtures/passes/decompose-batch-norm/batch_norm.mlir");

/// Deterministic values in [-2, 2) (a 32-bit LCG); variances are made positive.
fn inputs(types: &[neuronc_ir::TensorType], seed: u32, positive: &[usize]) -> Vec<Tensor> {
    let mut s = seed;
    types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let n = t.num_elements() as usize;
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let x = (s >> 8) as f64 / (1u32 << 24) as f64 * 4.0 - 2.0;
                    if positive.contains(&i) {
                        x.abs() + 0.1
                    } else {
                        x
                    }
                })
                .collect();
            Tensor::from_f64_as(t.elem, &t.shape, &v).unwrap()
        })
        .collect()
}

/// `m` after `decompose-batch-norm` (verified after the pass).
fn decomposed(mut m: Module) -> Module {
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    let pipeline = Pipeline::parse("decompose-batch-norm").unwrap();
    run_pipeline(&mut m, &pipeline, &mut ctx).unwrap();
    verify_module(&m).unwrap();
    m
}

#[test]
fn expansion_matches_native_kernels() {
    for (_, chunk) in split_input(FIXTURE) {
        let native = parse_module(chunk).unwrap();
        let name = native.funcs[0].name.clone();
        let types = arg_types(&native, &name).unwrap();
        // batch_norm_inference/grad take the variance as operand 4/3.
        let positive: &[usize] = match name.as_str() {
            "inference" => &[4],
            "grad" => &[3],
            _ => &[],
        };
        let args = inputs(&types, 7, positive);
        let expected = run_function(&native, &name, args.clone(), &RunOptions::default()).unwrap();
        let m = decomposed(native.clone());
        let actual = run_function(&m, &name, args, &RunOptions::default()).unwrap();
        for (i, (e, a)) in expected.iter().zip(&actual).enumerate() {
            let rtol = if e.elem() == ElemType::BF16 {
                1e-2
            } else {
                1e-5
            };
            compare(e, a, rtol, rtol * compare::max_abs(e))
                .unwrap_or_else(|err| panic!("@{name} output {i}: {err}"));
        }
    }
}

#[test]
fn inference_by_hand() {
    // scale 2, offset 1, mean 0, variance 3, eps 1: y = 2 * x / sqrt(4) + 1 = x + 1.
    let src = r#"
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %s = stablehlo.constant dense<2.000000e+00> : tensor<2xf32>
  %o = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
  %m = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
  %v = stablehlo.constant dense<3.000000e+00> : tensor<2xf32>
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 1.000000e+00 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"#;
    let m = decomposed(parse_module(src).unwrap());
    let x = Tensor::from_f32(&[2, 2], &[0.5, -1.0, 3.0, 10.0]).unwrap();
    let y = run_function(&m, "main", vec![x], &RunOptions::default()).unwrap();
    assert_eq!(y[0].as_f32().unwrap(), [1.5, 0.0, 4.0, 11.0]);
}

#[test]
fn results_read_by_another_batch_norm_by_hand() {
    // x = [[1, 3], [5, 7]], features along dim 1: feature 0 holds {1, 5} (mean 3,
    // variance 4), feature 1 holds {3, 7} (mean 5, variance 4). Scale 1, offset 0,
    // eps 0: y = (x - mean) / 2 = [[-1, -1], [1, 1]], for the training op and for the
    // inference op that reads its mean and variance (whose expansion must read the
    // replacements of those results).
    let src = r#"
func.func @main(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %s = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
  %o = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
  %y, %mean, %var = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 0.000000e+00 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %z = "stablehlo.batch_norm_inference"(%x, %s, %o, %mean, %var) {epsilon = 0.000000e+00 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %sum = stablehlo.add %y, %z : tensor<2x2xf32>
  return %sum, %mean : tensor<2x2xf32>, tensor<2xf32>
}"#;
    let m = decomposed(parse_module(src).unwrap());
    let x = Tensor::from_f32(&[2, 2], &[1.0, 3.0, 5.0, 7.0]).unwrap();
    let out = run_function(&m, "main", vec![x], &RunOptions::default()).unwrap();
    assert_eq!(out[0].as_f32().unwrap(), [-2.0, -2.0, 2.0, 2.0]);
    assert_eq!(out[1].as_f32().unwrap(), [3.0, 5.0]);
}

/// A bf16 `batch_norm_training` whose operand a bf16 `multiply` computes (from a torch_xla
/// trace of VITS in bf16). Under XLA:CPU's excess precision a `convert` bf16 -> f32 of the
/// multiply reads its unrounded f32 product, while the batch norm reads the rounded one;
/// the expansion widens its operand, so it must round explicitly. The oracle: on this
/// module the interpreter's `xla` semantics give what XLA:CPU (jaxlib) gives, bit for bit
/// (checked in probe round 9, where the expansion without the explicit rounding differed
/// from XLA in 22 of 96 elements); so the expansion must give the original's outputs
/// exactly.
#[test]
fn computed_bf16_operand_is_read_rounded_under_xla_semantics() {
    let text = "func.func @main(%x: tensor<1x6x16xbf16>, %k: tensor<1x6x16xbf16>, \
        %s: tensor<6xbf16>, %b: tensor<6xbf16>) \
        -> (tensor<1x6x16xbf16>, tensor<6xbf16>, tensor<6xbf16>) {
      %y = stablehlo.multiply %x, %k : tensor<1x6x16xbf16>
      %0:3 = \"stablehlo.batch_norm_training\"(%y, %s, %b) {epsilon = 9.99999974E-6 : f32, \
        feature_index = 1 : i64} : (tensor<1x6x16xbf16>, tensor<6xbf16>, tensor<6xbf16>) \
        -> (tensor<1x6x16xbf16>, tensor<6xbf16>, tensor<6xbf16>)
      return %0#0, %0#1, %0#2 : tensor<1x6x16xbf16>, tensor<6xbf16>, tensor<6xbf16>
    }";
    let native = parse_module(text).unwrap();
    let args = inputs(&arg_types(&native, "main").unwrap(), 11, &[]);
    let xla = RunOptions {
        float_semantics: neuronc_interp::FloatSemantics::Xla,
        ..RunOptions::default()
    };
    let expected = run_function(&native, "main", args.clone(), &xla).unwrap();
    let m = decomposed(native.clone());
    let actual = run_function(&m, "main", args, &xla).unwrap();
    for (i, (e, a)) in expected.iter().zip(&actual).enumerate() {
        compare(e, a, 0.0, 0.0).unwrap_or_else(|err| panic!("output {i}: {err}"));
    }
}
