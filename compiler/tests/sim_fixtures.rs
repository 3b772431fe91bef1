//! `run --engine sim` against the frameworks: every fixture with framework outputs
//! (`fixtures/**/X.mlir` + `X.npz`) is compiled as `compile` does and run in the
//! NeuronCore functional simulator, and each `out_*` is compared with the framework's
//! output under the interpreter's fixture tolerances (rtol 1e-4, atol 1e-5 × max|ref|;
//! 1e-3 for training steps; widened to a few ulps for bf16/f16 results).
//! Programs that compute in bf16 or f16 are the exception: the simulator rounds every
//! bf16/f16 result as the engines do (and as the StableHLO spec says), while XLA:CPU keeps
//! some bf16 intermediates in f32 and sums f16 reductions in its own order (see
//! `neuronc_interp::excess_precision`), so their reference is
//! the interpreter with `FloatSemantics::Strict` (itself checked against XLA through the
//! `xla` semantics in the interpreter's fixture tests).
//! Also: `--auto-cast matmult` equals rounding the matmul operands to bf16 by hand.

mod outputs;

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc_backend::engine::AutoCast;
use neuronc_interp::compare::compare;
use neuronc_interp::Tensor;
use std::path::Path;

fn simulate(text: &str, name: &str, inputs: Vec<Tensor>, cast: AutoCast) -> Vec<Tensor> {
    let module = neuronc::compile(name, text).expect("verifies");
    let func = module.entry().expect("entry").name.clone();
    neuronc::build::simulate(module, &func, inputs, "trn1", cast)
        .expect("simulates")
        .0
}

fn run_case(path: &Path, rtol: f64, atol_factor: f64) -> Result<(), String> {
    let case = outputs::load(path, None)?;
    let strict = outputs::computes_in_half(&case.module)
        .then(|| {
            neuronc_interp::run_function(
                &case.module,
                &case.func,
                case.args.clone(),
                &Default::default(),
            )
        })
        .transpose()
        .map_err(|e| e.to_string())?;
    let (outs, _) =
        neuronc::build::simulate(case.module, &case.func, case.args, "trn1", AutoCast::None)
            .map_err(|e| e.to_string())?;
    outputs::check(&outs, strict.as_deref(), &case.arrays, rtol, atol_factor)
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
    trials.push(Trial::test("sim/auto_cast_matches_hand_rounding", || {
        auto_cast_matches_hand_rounding().map_err(Failed::from)
    }));
    libtest_mimic::run(&args, trials).exit();
}
