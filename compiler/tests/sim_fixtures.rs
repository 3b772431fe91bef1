//! `run --engine sim` against the frameworks: every fixture with framework outputs
//! (`fixtures/**/X.mlir` + `X.npz`) is compiled as `compile` does (default float semantics,
//! `xla`) and run in the NeuronCore functional simulator, and each `out_*` is compared with
//! the framework's output under the interpreter's fixture tolerances (rtol 1e-4, atol 1e-5
//! × max|ref|; 1e-3 for training steps; widened to a few ulps for bf16/f16 results). This
//! holds for programs that compute in bf16 or f16 too: the `xla` compile keeps the bf16
//! intermediates XLA:CPU keeps in f32 and sums in XLA's order (see `neuronc::build`).
//! `sim-strict/X` compiles those half-precision programs with `--float-semantics strict`
//! (every bf16/f16 result rounded, as the StableHLO spec says) and compares with the
//! interpreter under `FloatSemantics::Strict`, whose bf16 rounding is checked against hand
//! derivations in the interpreter's tests; `sim/float_semantics_rounding` checks both
//! compiles on a hand-derived program.
//! Also: `--auto-cast matmult` equals rounding the matmul operands to bf16 by hand.
//! `sim-recompute/X` compiles the fixtures that `recompute-for-contraction` changes (their
//! attention probabilities recomputed for `P·V`) with `--recompute-for-contraction`
//! and compares with the framework as `sim/X` does.

mod outputs;

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc::build::{BuildOptions, FloatSemantics, Recompute};
use neuronc::ir::ElemType;
use neuronc_backend::engine::AutoCast;
use neuronc_interp::compare::compare;
use neuronc_interp::Tensor;
use std::path::Path;

/// Build options of `run --engine sim` (trn1) with `auto_cast` and `float_semantics`.
fn sim_options(auto_cast: AutoCast, float_semantics: FloatSemantics) -> BuildOptions {
    BuildOptions {
        target: "trn1".into(),
        auto_cast,
        float_semantics,
        ..BuildOptions::default()
    }
}

fn simulate(text: &str, name: &str, inputs: Vec<Tensor>, cast: AutoCast) -> Vec<Tensor> {
    let module = neuronc::compile(name, text).expect("verifies");
    let func = module.entry().expect("entry").name.clone();
    let opts = sim_options(cast, FloatSemantics::Xla);
    neuronc::build::simulate(module, &func, inputs, &opts)
        .expect("simulates")
        .0
}

/// A fixture compiled with the default (`xla`) float semantics against the framework.
fn run_case(path: &Path, rtol: f64, atol_factor: f64) -> Result<(), String> {
    let case = outputs::load(path, None)?;
    let opts = sim_options(AutoCast::None, FloatSemantics::Xla);
    let (outs, _) = neuronc::build::simulate(case.module, &case.func, case.args, &opts)
        .map_err(|e| e.to_string())?;
    outputs::check(&outs, None, &case.arrays, rtol, atol_factor)
}

/// A fixture compiled with `--recompute-for-contraction` against the framework.
fn run_recompute_case(path: &Path, rtol: f64, atol_factor: f64) -> Result<(), String> {
    let case = outputs::load(path, None)?;
    let opts = BuildOptions {
        recompute_for_contraction: Recompute::On,
        ..sim_options(AutoCast::None, FloatSemantics::Xla)
    };
    let (outs, _) = neuronc::build::simulate(case.module, &case.func, case.args, &opts)
        .map_err(|e| e.to_string())?;
    outputs::check(&outs, None, &case.arrays, rtol, atol_factor)
}

/// Whether `recompute-for-contraction` changes fixture `sim-recompute/NAME` after the
/// clean-up `compile` runs before it.
fn recompute_changes(root: &Path, trial: &str) -> bool {
    use neuronc_passes::{run_pipeline, PassContext, Pipeline};
    let name = trial.trim_start_matches("sim-recompute/");
    let Ok(mut m) = neuronc::Source::read(&root.join(name), name)
        .and_then(|source| neuronc::compile_source(&source))
    else {
        return false;
    };
    let mut run = |text: &str| {
        let pipeline = Pipeline::parse(text).expect("pipeline parses");
        run_pipeline(&mut m, &pipeline, &mut PassContext::new())
    };
    run(neuronc::build::CLEANUP).is_ok()
        && run("recompute-for-contraction").is_ok_and(|r| r.rewrites > 0)
}

/// A half-precision fixture compiled with strict semantics against the interpreter's
/// strict semantics (the framework computes something else, see the file header).
fn run_strict_case(path: &Path, rtol: f64, atol_factor: f64) -> Result<(), String> {
    let case = outputs::load(path, None)?;
    let strict = neuronc_interp::run_function(
        &case.module,
        &case.func,
        case.args.clone(),
        &neuronc_interp::RunOptions {
            float_semantics: FloatSemantics::Strict,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let opts = sim_options(AutoCast::None, FloatSemantics::Strict);
    let (outs, _) = neuronc::build::simulate(case.module, &case.func, case.args, &opts)
        .map_err(|e| e.to_string())?;
    outputs::check(&outs, Some(&strict), &case.arrays, rtol, atol_factor)
}

/// A bf16 product read by a convert to f32, and a bf16 sum read by a convert to f32.
const ROUNDING: &str = "func.func @main(%a: tensor<2xbf16>, %b: tensor<2xbf16>, %x: tensor<4xbf16>) -> (tensor<2xf32>, tensor<f32>) {
  %m = stablehlo.multiply %a, %b : tensor<2xbf16>
  %mc = stablehlo.convert %m : (tensor<2xbf16>) -> tensor<2xf32>
  %z = stablehlo.constant dense<0.0> : tensor<bf16>
  %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xbf16>, tensor<bf16>) -> tensor<bf16>
  %rc = stablehlo.convert %r : (tensor<bf16>) -> tensor<f32>
  return %mc, %rc : tensor<2xf32>, tensor<f32>
}";

/// [`ROUNDING`] compiled under both float semantics, against hand-derived values. bf16 has
/// 8 significant bits (spacing 2^-7 in [1, 2), 2^-6 in [2, 4)), ties round to even.
/// * `a * b` with a = (1 + 2^-7, 3), b = (1 + 2^-7, 1 + 2^-7): exact products
///   1 + 2^-6 + 2^-14 and 3 + 3·2^-7, both exact in f32. `xla` (XLA:CPU computes the
///   product in f32 and the convert reads it unrounded): those values. `strict` (the
///   product is a bf16 value): 1 + 2^-6 (2^-14 is below half a spacing) and 3 + 2^-5
///   (3 + 1.5·2^-6 is a tie between 3 + 2^-6, odd, and 3 + 2^-5, even).
/// * `sum(1, 2^-8, 2^-8, 2^-8)` under `xla` (XLA:CPU folds in order, rounding each step):
///   1 + 2^-8 is a tie between 1 (even) and 1 + 2^-7, so every step gives 1. (The strict
///   sum's order is implementation-defined, so it is not checked.)
fn float_semantics_rounding() -> Result<(), String> {
    let ulp = 2f64.powi(-7);
    let bf16 = |shape: &[i64], v: &[f64]| Tensor::from_f64_as(ElemType::BF16, shape, v);
    let q = 2f64.powi(-8);
    let inputs = vec![
        bf16(&[2], &[1.0 + ulp, 3.0])?,
        bf16(&[2], &[1.0 + ulp, 1.0 + ulp])?,
        bf16(&[4], &[1.0, q, q, q])?,
    ];
    let run = |sem| -> Result<Vec<Vec<f64>>, String> {
        let module = neuronc::compile("rounding", ROUNDING).map_err(|e| e.to_string())?;
        let opts = sim_options(AutoCast::None, sem);
        let (outs, _) = neuronc::build::simulate(module, "main", inputs.clone(), &opts)
            .map_err(|e| e.to_string())?;
        Ok(outs.iter().map(Tensor::to_f64_vec).collect())
    };
    let xla = run(FloatSemantics::Xla)?;
    let want_xla = vec![
        vec![1.0 + 2.0 * ulp + 2f64.powi(-14), 3.0 + 3.0 * ulp],
        vec![1.0],
    ];
    if xla != want_xla {
        return Err(format!("xla: got {xla:?}, want {want_xla:?}"));
    }
    let strict = run(FloatSemantics::Strict)?;
    let want_strict = vec![1.0 + 2.0 * ulp, 3.0 + 4.0 * ulp];
    if strict[0] != want_strict {
        return Err(format!("strict: got {:?}, want {want_strict:?}", strict[0]));
    }
    Ok(())
}

/// `dot_general` with K = 300 (three PSUM tiles) under auto-cast, against the
/// interpreter running the same contraction on operands converted to bf16 and back.
fn auto_cast_matches_hand_rounding() -> Result<(), String> {
    let sim_src = "func.func @main(%a: tensor<5x300xf32>, %b: tensor<300x7xf32>) -> tensor<5x7xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<5x300xf32>, tensor<300x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}";
    let ref_src = "func.func @main(%a: tensor<5x300xf32>, %b: tensor<300x7xf32>) -> tensor<5x7xf32> {
  %a1 = stablehlo.convert %a : (tensor<5x300xf32>) -> tensor<5x300xbf16>
  %b1 = stablehlo.convert %b : (tensor<300x7xf32>) -> tensor<300x7xbf16>
  %a2 = stablehlo.convert %a1 : (tensor<5x300xbf16>) -> tensor<5x300xf32>
  %b2 = stablehlo.convert %b1 : (tensor<300x7xbf16>) -> tensor<300x7xf32>
  %0 = stablehlo.dot_general %a2, %b2, contracting_dims = [1] x [0] : (tensor<5x300xf32>, tensor<300x7xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}";
    let a: Vec<f32> = (0..1500)
        .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * 1.0007)
        .collect();
    let b: Vec<f32> = (0..2100)
        .map(|i| ((i * 53 % 97) as f32 / 48.0 - 1.0) * 0.9993)
        .collect();
    let inputs = vec![
        Tensor::from_f32(&[5, 300], &a).map_err(|e| e.to_string())?,
        Tensor::from_f32(&[300, 7], &b).map_err(|e| e.to_string())?,
    ];
    let got = simulate(sim_src, "sim", inputs.clone(), AutoCast::Matmult);
    let module = neuronc::compile("ref", ref_src).map_err(|e| e.to_string())?;
    let want = neuronc_interp::run_function(&module, "main", inputs.clone(), &Default::default())
        .map_err(|e| e.to_string())?;
    compare(&want[0], &got[0], 1e-6, 1e-5).map_err(|e| format!("auto-cast: {e}"))?;
    // Without auto-cast the operands keep f32 precision, so the results differ.
    let exact = simulate(sim_src, "sim", inputs, AutoCast::None);
    if compare(&want[0], &exact[0], 1e-6, 1e-6).is_ok() {
        return Err("operands not rounded: f32 and bf16 operands gave the same result".into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut trials = outputs::fixture_trials(&root, "sim", &[], run_case);
    let strict = outputs::fixture_trials(&root, "sim-strict", &[], run_strict_case);
    trials.extend(
        strict
            .into_iter()
            .filter(|t| computes_in_half(&root, t.name())),
    );
    let recompute = outputs::fixture_trials(&root, "sim-recompute", &[], run_recompute_case);
    trials.extend(
        recompute
            .into_iter()
            .filter(|t| recompute_changes(&root, t.name())),
    );
    trials.push(Trial::test("sim/float_semantics_rounding", || {
        float_semantics_rounding().map_err(Failed::from)
    }));
    trials.push(Trial::test("sim/auto_cast_matches_hand_rounding", || {
        auto_cast_matches_hand_rounding().map_err(Failed::from)
    }));
    libtest_mimic::run(&args, trials).exit();
}

/// Whether the fixture of trial `sim-strict/NAME` computes in bf16 or f16.
fn computes_in_half(root: &Path, trial: &str) -> bool {
    let name = trial.trim_start_matches("sim-strict/");
    neuronc::Source::read(&root.join(name), name)
        .and_then(|source| neuronc::compile_source(&source))
        .is_ok_and(|m| outputs::computes_in_half(&m))
}
