//! `compile`: the whole pipeline from a verified module to the artifact directory.
//!
//! Owns [`build`] and [`Artifacts`]: the float-semantics rewrite, generic -O2 clean-up,
//! NeuronCore layout and fusion planning, engine lowering and simulation, HLO emission,
//! and the manifest. Pure: it returns file contents; the CLI writes them. Same input and
//! options, byte-identical artifacts (no timestamps, no hash-order iteration;
//! `compile_time_s` lives only in the report, which is therefore excluded from the content
//! hash).
//!
//! Float semantics ([`BuildOptions::float_semantics`]): with [`FloatSemantics::Xla`] (the
//! default) the module the engine program is planned from is first rewritten by
//! `neuronc_interp::excess_precision::xla_module`, the rewrite the interpreter's `xla`
//! semantics runs on, so that fusion, lowering, the report and the simulator see f32 where
//! XLA:CPU keeps bf16 intermediates in f32, and bf16/f16 sums as XLA:CPU's sequential
//! `reduce_window` chains. With [`FloatSemantics::Strict`] the module is compiled as
//! written (every bf16 op result rounded, as the StableHLO spec says). A module without
//! bf16/f16 types differs only where XLA's result-changing simplifications apply
//! (`multiply(convert(pred), x) -> select(pred, x, 0)`, `log(exp(x)) -> x`, constant
//! re-association such as `(a - c1) + c2 -> a + (c2 - c1)` and `a / rsqrt(b) -> a * sqrt(b)`,
//! `neuronc_interp::xla_reassoc`).
//!
//! `model.hlo.pb` / `model.hlo.txt` are emitted from the module *without* that rewrite
//! under both semantics: whoever runs the HLO applies its own float semantics to it, and
//! XLA:CPU applied to the rewritten module would widen a second time (a bf16 op that the
//! rewrite now reads through an explicit `convert` to f32 gets its f32 value), which no
//! longer matches the framework.

use std::borrow::Cow;
use std::time::Instant;

use neuronc_backend::engine::{compile_function, CoreModel, EngineOptions};
pub use neuronc_backend::engine::{AutoCast, Report};
use neuronc_backend::sim::{self, SimOptions};
use neuronc_backend::{emit_hlo_module, HloOptions};
use neuronc_interp::excess_precision::xla_module;
pub use neuronc_interp::FloatSemantics;
use neuronc_interp::Tensor;
use neuronc_ir::{Module, Type};
use serde_json::json;

use crate::error::Error;
use crate::plan::{cleanup, plan_cleaned, plan_function_of};
pub use crate::plan::{Planned, Recompute, RecomputeChoice, TransposeCost, CLEANUP, RECOMPUTE};

/// Rewrites `module` to follow `semantics` (see the module documentation): XLA:CPU's
/// excess precision for [`FloatSemantics::Xla`], nothing for [`FloatSemantics::Strict`].
/// Returns the module as it was when the rewrite changed it.
pub fn apply_float_semantics(module: &mut Module, semantics: FloatSemantics) -> Option<Module> {
    if semantics != FloatSemantics::Xla {
        return None;
    }
    match xla_module(module) {
        Cow::Borrowed(_) => None,
        Cow::Owned(m) => Some(std::mem::replace(module, m)),
    }
}

/// Applies `semantics`, then plans the entry function (`@main`, or the only public
/// function) as [`plan_function_of`] does under `opts`. Shared by `compile` and
/// `explain` (which also asks for the plan not taken: `explore_alternative`).
pub fn plan_entry(
    module: &mut Module,
    opts: &BuildOptions,
    explore_alternative: bool,
) -> Result<Planned, Error> {
    let engine = engine_options(opts)?;
    apply_float_semantics(module, opts.float_semantics);
    plan_function_of(
        module,
        None,
        opts.recompute_for_contraction,
        explore_alternative,
        &engine,
    )
}

/// The engine options `opts` asks for (target model, auto-cast).
fn engine_options(opts: &BuildOptions) -> Result<EngineOptions, Error> {
    Ok(EngineOptions {
        model: target_model(&opts.target)?,
        auto_cast: opts.auto_cast,
        ..EngineOptions::default()
    })
}

/// `run --engine sim`: plans function `name` as `compile` does with `opts` (float
/// semantics, clean-up, layouts, kernels), runs the plan in the functional simulator, and
/// schedules it for `opts.target` for the predicted time.
pub fn simulate(
    mut module: Module,
    name: &str,
    inputs: Vec<Tensor>,
    opts: &BuildOptions,
) -> Result<(Vec<Tensor>, Report), Error> {
    let engine_opts = engine_options(opts)?;
    let auto_cast = opts.auto_cast;
    apply_float_semantics(&mut module, opts.float_semantics);
    let Planned {
        func,
        plan,
        lowered,
        ..
    } = plan_function_of(
        &mut module,
        Some(name),
        opts.recompute_for_contraction,
        false,
        &engine_opts,
    )?;
    let results = sim::simulate(&module, &func, &plan, &SimOptions { auto_cast }, inputs)
        .map_err(|e| Error::Run(format!("engine simulator: {e}")))?;
    let out = match lowered {
        Some(out) => out,
        None => compile_function(&module, &func, &plan, &engine_opts)
            .map_err(|e| Error::Run(format!("engine back end: {e}")))?,
    };
    Ok((results, out.report))
}

fn target_model(target: &str) -> Result<CoreModel, Error> {
    CoreModel::by_name(target).ok_or_else(|| {
        Error::Run(format!(
            "unknown target '{target}' (expected trn1, trn2 or inf2)"
        ))
    })
}

/// Options of `neuronc-rs compile`.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// `trn1`, `trn2` or `inf2`.
    pub target: String,
    pub auto_cast: AutoCast,
    /// Which bf16 rounding the compiled program follows (see the module documentation).
    pub float_semantics: FloatSemantics,
    /// When to run `recompute-for-contraction` before planning (attention probabilities
    /// get a copy computed with keys on the partitions instead of a transpose: fewer
    /// transposes and, at long sequences, less HBM traffic, for more Vector/Scalar-engine
    /// work); see [`crate::plan`].
    pub recompute_for_contraction: Recompute,
}

impl Default for BuildOptions {
    /// The command line's defaults: `--target trn1 --auto-cast matmult
    /// --float-semantics xla --recompute-for-contraction=auto`.
    fn default() -> Self {
        BuildOptions {
            target: "trn1".into(),
            auto_cast: AutoCast::default(),
            float_semantics: FloatSemantics::Xla,
            recompute_for_contraction: Recompute::Auto,
        }
    }
}

/// The files of an artifact directory, by name, plus the report for the summary.
pub struct Artifacts {
    pub files: Vec<(&'static str, Vec<u8>)>,
    pub report: Report,
    pub kernels: usize,
    pub compile_time_s: f64,
}

/// A stage of [`build_with_progress`], reported when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildStage {
    /// The generic [`CLEANUP`] passes.
    Cleanup,
    /// Layout and fusion planning.
    Plan,
    /// Engine lowering and scheduling, with HLO emission alongside.
    Lower,
    /// The artifact texts and the manifest.
    EmitHlo,
}

/// Compiles a verified module.
pub fn build(module: Module, opts: &BuildOptions) -> Result<Artifacts, Error> {
    build_with_progress(module, opts, &mut |_| {})
}

/// [`build`], calling `progress` as each [`BuildStage`] starts (for a progress bar; the
/// artifacts do not depend on it).
pub fn build_with_progress(
    mut module: Module,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(BuildStage),
) -> Result<Artifacts, Error> {
    let start = Instant::now();
    let engine_opts = engine_options(opts)?;
    progress(BuildStage::Cleanup);
    // The HLO artifact keeps the framework's program (see the module documentation).
    let hlo_module = match apply_float_semantics(&mut module, opts.float_semantics) {
        Some(mut original) => {
            cleanup(&mut original)?;
            Some(original)
        }
        None => None,
    };
    cleanup(&mut module)?;
    progress(BuildStage::Plan);
    let Planned {
        func,
        plan,
        recompute,
        lowered,
    } = plan_cleaned(
        &mut module,
        None,
        opts.recompute_for_contraction,
        false,
        &engine_opts,
    )?;
    progress(BuildStage::Lower);
    // The engine program and the HLO module are independent views of the planned module,
    // and so are the program's two text forms: each pair is built on two threads (the
    // program was already lowered when auto compared two plans).
    let (out, hlo) = rayon::join(
        || match lowered {
            Some(out) => Ok(out),
            None => compile_function(&module, &func, &plan, &engine_opts),
        },
        || {
            emit_hlo_module(
                hlo_module.as_ref().unwrap_or(&module),
                &HloOptions::default(),
            )
        },
    );
    let out = out.map_err(|e| Error::Run(format!("backend: {e}")))?;
    let hlo = hlo.map_err(|e| Error::Run(e.to_string()))?;
    progress(BuildStage::EmitHlo);
    let compile_time_s = start.elapsed().as_secs_f64();
    let mut report = serde_json::to_value(&out.report).map_err(|e| Error::Run(e.to_string()))?;
    report["compile_time_s"] = json!(compile_time_s);
    report["fusion_kernels"] = json!(plan.fusion.kernels.len());
    report["recompute_for_contraction"] = recompute_json(&recompute);
    let (nir, timeline) = rayon::join(|| out.program_nir(), || out.timeline_json());
    let mut files: Vec<(&'static str, Vec<u8>)> = vec![
        ("model.hlo.pb", hlo.bytes),
        ("model.hlo.txt", hlo.text.into_bytes()),
        ("program.nir", nir.into_bytes()),
        ("timeline.json", timeline.into_bytes()),
    ];
    let hash = content_hash(&files);
    let manifest = manifest(&module, &func, opts, hash);
    files.push(("manifest.json", manifest.into_bytes()));
    files.push(("report.json", format!("{report:#}\n").into_bytes()));
    Ok(Artifacts {
        files,
        report: out.report,
        kernels: plan.fusion.kernels.len(),
        compile_time_s,
    })
}

/// `report.json`'s record of the [`RecomputeChoice`]: the mode, whether the pass was
/// applied, and the other plan's transposes when one was made.
pub fn recompute_json(c: &RecomputeChoice) -> serde_json::Value {
    json!({
        "mode": c.mode.name(),
        "applied": c.applied,
        "over_budget": c.over_budget,
        "predicted_time_s": c.predicted_s.map(|(without, with)| json!({
            "without": without, "with": with,
        })),
        "alternative": c.alternative.as_ref().map(cost_json),
    })
}

/// A [`TransposeCost`] as JSON (`transposes`, `transpose_bytes`, `matmul_operand_bytes`).
pub fn cost_json(a: &TransposeCost) -> serde_json::Value {
    json!({
        "transposes": a.transposes,
        "transpose_bytes": a.transpose_bytes,
        "matmul_operand_bytes": a.matmul_operand_bytes,
    })
}

fn manifest(m: &Module, func: &neuronc_ir::Func, opts: &BuildOptions, hash: u64) -> String {
    let describe = |ty: neuronc_ir::TypeId| match m.ty(ty) {
        Type::Tensor(t) => json!({"shape": t.shape, "dtype": t.elem.to_string()}),
        Type::Tuple(_) => json!({"dtype": "tuple"}),
        Type::Token => json!({"dtype": "token"}),
        Type::Future(_) => json!({"dtype": "future"}),
    };
    let inputs: Vec<_> = m
        .region(func.body)
        .args
        .iter()
        .map(|&a| describe(m.value_type(a)))
        .collect();
    let outputs: Vec<_> = func.result_types.iter().map(|&t| describe(t)).collect();
    let mut flags = json!({
        "auto_cast": format!("{:?}", opts.auto_cast).to_lowercase(),
        "float_semantics": semantics_name(opts.float_semantics),
    });
    // Listed only when set, so that manifests of default compiles stay as they were.
    if opts.recompute_for_contraction != Recompute::Auto {
        flags["recompute_for_contraction"] = json!(opts.recompute_for_contraction.name());
    }
    let v = json!({
        "entry": func.name,
        "inputs": inputs,
        "outputs": outputs,
        "target": opts.target,
        "flags": flags,
        "compiler": {"name": "neuronc-rs", "version": env!("CARGO_PKG_VERSION")},
        "content_hash": format!("{hash:016x}"),
    });
    format!("{v:#}\n")
}

/// The command-line spelling of `s` (`xla`, `strict`), as the manifest and the compile
/// cache key record it.
pub fn semantics_name(s: FloatSemantics) -> &'static str {
    match s {
        FloatSemantics::Xla => "xla",
        FloatSemantics::Strict => "strict",
    }
}

/// FNV-1a over the artifact bytes (written by hand: 6 lines instead of a hashing crate).
fn content_hash(files: &[(&'static str, Vec<u8>)]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in files
        .iter()
        .flat_map(|(n, d)| n.as_bytes().iter().chain(d.iter()))
    {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A bf16 product read only by a widening convert: XLA's semantics keep it in f32
/// (`FloatSemantics::Xla`), strict rounding does not. Shared by unit tests.
#[cfg(test)]
pub(crate) const BF16_WIDENED: &str = "func.func @main(%a: tensor<2xbf16>) -> tensor<2xf32> {
  %m = stablehlo.multiply %a, %a : tensor<2xbf16>
  %c = stablehlo.convert %m : (tensor<2xbf16>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}";

#[cfg(test)]
mod tests {
    use super::{build, BuildOptions, FloatSemantics, Recompute, BF16_WIDENED};

    fn manifest_flags(float_semantics: FloatSemantics) -> serde_json::Value {
        manifest_flags_of(&BuildOptions {
            float_semantics,
            ..BuildOptions::default()
        })
    }

    fn manifest_flags_of(opts: &BuildOptions) -> serde_json::Value {
        let text = BF16_WIDENED;
        let module = crate::compile("m", text).expect("verifies");
        let art = build(module, opts).expect("compiles");
        let (_, bytes) = art
            .files
            .iter()
            .find(|(n, _)| *n == "manifest.json")
            .expect("manifest.json");
        let v: serde_json::Value = serde_json::from_slice(bytes).expect("json");
        v["flags"].clone()
    }

    /// The manifest records the float semantics the program was compiled with, spelled as
    /// on the command line; `xla` is the default.
    #[test]
    fn manifest_records_float_semantics() {
        assert_eq!(
            manifest_flags(FloatSemantics::Strict)["float_semantics"],
            "strict"
        );
        assert_eq!(
            manifest_flags(FloatSemantics::Xla)["float_semantics"],
            "xla"
        );
        assert_eq!(BuildOptions::default().float_semantics, FloatSemantics::Xla);
    }

    /// `--recompute-for-contraction` is recorded when set to `on` or `off`, and absent
    /// under the default `auto` (so that default manifests stay as they were).
    #[test]
    fn manifest_records_recompute_only_when_set() {
        for mode in [Recompute::On, Recompute::Off] {
            let set = manifest_flags_of(&BuildOptions {
                recompute_for_contraction: mode,
                ..BuildOptions::default()
            });
            assert_eq!(set["recompute_for_contraction"], mode.name());
        }
        let default = manifest_flags(FloatSemantics::Xla);
        assert!(default.get("recompute_for_contraction").is_none());
    }
}
