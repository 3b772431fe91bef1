//! Rewrites must keep what XLA:CPU computes, not only what the StableHLO spec says: under
//! XLA's bf16 excess precision a `convert` bf16 -> f32 of an op result reads the op's
//! unrounded f32 value. These modules are checked with the interpreter's `xla` float
//! semantics, which give XLA:CPU's (jaxlib's) results on each of them bit for bit (checked
//! with `tools/xla_run.py` when the tests were written), so after `-O2`-style rewriting the
//! outputs must equal the original's exactly.

use neuronc_interp::{arg_types, compare, run_function, FloatSemantics, RunOptions, Tensor};
use neuronc_ir::parse_module;
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

/// Deterministic values in [-1, 1) (a 32-bit LCG), in each argument's element type.
fn inputs(text: &str) -> Vec<Tensor> {
    let m = parse_module(text).unwrap();
    let mut s = 5u32;
    let types = arg_types(&m, "main").unwrap();
    types
        .iter()
        .map(|t| {
            let v: Vec<f64> = (0..t.num_elements())
                .map(|_| {
                    s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (s >> 8) as f64 / (1u32 << 24) as f64 * 2.0 - 1.0
                })
                .collect();
            Tensor::from_f64_as(t.elem, &t.shape, &v).unwrap()
        })
        .collect()
}

/// Runs `passes` on `text` and checks the outputs under `xla` semantics are unchanged.
fn assert_xla_outputs_kept(text: &str, passes: &str) {
    let original = parse_module(text).unwrap();
    let mut m = original.clone();
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    run_pipeline(&mut m, &Pipeline::parse(passes).unwrap(), &mut ctx).unwrap();
    let xla = RunOptions {
        float_semantics: FloatSemantics::Xla,
        ..RunOptions::default()
    };
    let args = inputs(text);
    let expected = run_function(&original, "main", args.clone(), &xla).unwrap();
    let actual = run_function(&m, "main", args, &xla).unwrap();
    for (i, (e, a)) in expected.iter().zip(&actual).enumerate() {
        compare(e, a, 0.0, 0.0).unwrap_or_else(|err| panic!("output {i}: {err}"));
    }
}

/// `convert(convert(x):f32):f64` of a bf16 product: XLA reads the unrounded product in the
/// first convert, so the pair must not become one convert bf16 -> f64 (on jaxlib 63 of these
/// 64 outputs changed when it did).
#[test]
fn bf16_to_f32_convert_of_a_computed_value_is_not_folded_into_a_wider_one() {
    let text = "func.func @main(%x: tensor<64xbf16>, %k: tensor<64xbf16>) -> tensor<64xf64> {
      %y = stablehlo.multiply %x, %k : tensor<64xbf16>
      %a = stablehlo.convert %y : (tensor<64xbf16>) -> tensor<64xf32>
      %b = stablehlo.convert %a : (tensor<64xf32>) -> tensor<64xf64>
      return %b : tensor<64xf64>
    }";
    assert_xla_outputs_kept(text, "canonicalize");
}

/// The same chain from a function argument (bf16 exactly, nothing unrounded to read) still
/// folds: the rule only stands back where XLA reads more than the value.
#[test]
fn bf16_to_f32_convert_of_an_argument_still_folds() {
    let text = "func.func @main(%x: tensor<8xbf16>) -> tensor<8xf64> {
      %a = stablehlo.convert %x : (tensor<8xbf16>) -> tensor<8xf32>
      %b = stablehlo.convert %a : (tensor<8xf32>) -> tensor<8xf64>
      return %b : tensor<8xf64>
    }";
    let mut m = parse_module(text).unwrap();
    let pipeline = Pipeline::parse("canonicalize").unwrap();
    run_pipeline(&mut m, &pipeline, &mut PassContext::new()).unwrap();
    let body = &m.region(m.funcs[0].body).ops;
    let converts = body
        .iter()
        .filter(|&&o| m.op(o).kind == neuronc_ir::OpKind::Convert)
        .count();
    assert_eq!(converts, 1);
    assert_xla_outputs_kept(text, "canonicalize");
}
