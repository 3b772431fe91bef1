//! `HloModuleProto` import, checked against the frameworks: every fixture with framework
//! outputs (`fixtures/**/X.mlir` + `X.npz`) is compiled as `compile` does, its
//! `model.hlo.pb` (the artifact XLA:CPU runs in the `hlo_oracle` test) is read back by
//! `neuronc_backend::hlo_import`, parsed, verified and run by the interpreter, and each
//! `out_*` is compared with the framework's output under the interpreter's fixture
//! tolerances (rtol 1e-4, atol 1e-5 × max|ref|; 1e-3 for training steps; widened to a few
//! ulps for bf16/f16 results).
//! Programs that compute in bf16 or f16 compare against the original module run by the
//! interpreter under the same (strict) float semantics instead: XLA:CPU keeps some
//! half-precision intermediates in f32 where the emitted HLO's op structure differs from
//! the trace's (see `neuronc_interp::excess_precision`).
//! Independently of our emitter, every `fixtures/hlo/X.pb` (the module jax hands XLA) and
//! `X.opt.pb` (the same after XLA:CPU's optimization passes: fusions, bitcasts, copies,
//! layouts), written by `fixtures/gen/hlo_proto_fixtures.py`, is read as the CLI reads a
//! `.pb` input and run with XLA's float semantics against jax's outputs in `X.npz`.
//! Also: malformed bytes and unsupported opcodes are typed errors, never panics.
//! Trials in [`INTERPRETER_GAPS`] are ignored (listed, not hidden): the import is right
//! there (the same StableHLO text runs to the framework's outputs on XLA:CPU), but the
//! interpreter computes something else for it.

mod outputs;

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc::build::{build, BuildOptions};
use neuronc_backend::hlo_import::{hlo_proto_to_stablehlo, ImportError};
use std::path::Path;

fn run_case(path: &Path, rtol: f64, atol_factor: f64) -> Result<(), String> {
    let case = outputs::load(path, None)?;
    let half = outputs::computes_in_half(&case.module);
    let artifacts = build(case.module, &BuildOptions::default()).map_err(|e| e.to_string())?;
    let pb = artifacts
        .files
        .iter()
        .find(|(n, _)| *n == "model.hlo.pb")
        .ok_or("no model.hlo.pb")?;
    let imported = hlo_proto_to_stablehlo(&pb.1).map_err(|e| format!("import: {e}"))?;
    let reference = half
        .then(|| outputs::run_text(&case.text, "trace", case.args.clone()))
        .transpose()?;
    let outs = outputs::run_text(&imported, "model.hlo.pb", case.args)?;
    outputs::check(&outs, reference.as_deref(), &case.arrays, rtol, atol_factor)
}

/// Garbage, a truncated proto and an unknown opcode are typed errors naming the problem.
fn bad_inputs_are_errors() -> Result<(), String> {
    match hlo_proto_to_stablehlo(&[0xff, 0xff, 0xff]) {
        Err(ImportError::Decode(_)) => {}
        other => return Err(format!("garbage: {other:?}")),
    }
    let src = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}";
    let module = neuronc::compile("exp", src).map_err(|e| e.to_string())?;
    let art = neuronc_backend::emit_hlo_module(&module, &Default::default())
        .map_err(|e| e.to_string())?;
    let cut = &art.bytes[..art.bytes.len() / 2];
    if hlo_proto_to_stablehlo(cut).is_ok() {
        return Err("a truncated proto was accepted".into());
    }
    let mut proto = art.proto.clone();
    for c in &mut proto.computations {
        for i in &mut c.instructions {
            if i.opcode == "exponential" {
                i.opcode = "frobnicate".into();
            }
        }
    }
    let err = neuronc_backend::hlo_import::module_to_stablehlo(&proto)
        .err()
        .ok_or("an unknown opcode was accepted")?;
    let msg = err.to_string();
    if !msg.contains("frobnicate") || !msg.contains("unsupported") {
        return Err(format!("unhelpful error: {msg}"));
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut trials =
        outputs::fixture_trials(&root, "hlo_import", outputs::INTERPRETER_GAPS, run_case);
    let protos = outputs::files_ending(&root.join("hlo"), ".pb");
    if protos.is_empty() {
        trials.push(Trial::test("hlo_import/jax_protos_present", || {
            Err(Failed::from("no fixtures/hlo/*.pb"))
        }));
    }
    for (p, name) in protos {
        trials.push(Trial::test(format!("hlo_import/jax/{name}"), move || {
            outputs::run_jax_artifact(&p).map_err(Failed::from)
        }));
    }
    trials.push(Trial::test("hlo_import/bad_inputs_are_errors", || {
        bad_inputs_are_errors().map_err(Failed::from)
    }));
    libtest_mimic::run(&args, trials).exit();
}
