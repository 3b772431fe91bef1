//! `compile`: the whole pipeline from a verified module to the artifact directory.
//!
//! Owns [`build`] and [`Artifacts`]: generic -O2 clean-up, NeuronCore layout and fusion
//! planning, engine lowering and simulation, HLO emission, and the manifest. Pure: it
//! returns file contents; the CLI writes them. Same input and options, byte-identical
//! artifacts (no timestamps, no hash-order iteration; `compile_time_s` lives only in the
//! report, which is therefore excluded from the content hash).

use std::time::Instant;

use neuronc_backend::engine::{compile_function, CoreModel, EngineOptions};
pub use neuronc_backend::engine::{AutoCast, Report};
use neuronc_backend::sim::{self, SimOptions};
use neuronc_backend::{emit_hlo_module, HloOptions};
use neuronc_interp::Tensor;
use neuronc_ir::{Module, Type};
use neuronc_passes::neuron::fusion::FusionConfig;
use neuronc_passes::neuron::{plan_function, NeuronPlan};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use serde_json::json;

use crate::error::Error;

/// Generic clean-up before planning: sharding annotations go first (one NeuronCore, see
/// `strip-sharding`), then -O2 without outlining (the backend plans kernels itself and the
/// HLO artifact keeps plain ops).
pub const CLEANUP: &str = "strip-sharding,inline,decompose-batch-norm,\
     fixpoint<8>(canonicalize,cse,dce,narrow-index),sink-constants";

/// Runs the [`CLEANUP`] pipeline, then plans layouts and kernels for the entry function
/// (`@main`, or the only public function). Shared by `compile` and `explain`.
pub fn plan_entry(module: &mut Module) -> Result<(neuronc_ir::Func, NeuronPlan), Error> {
    plan_named(module, None)
}

/// [`plan_entry`] for function `name` (`None`: the entry function).
fn plan_named(
    module: &mut Module,
    name: Option<&str>,
) -> Result<(neuronc_ir::Func, NeuronPlan), Error> {
    plan_named_with(module, name, &mut |_| {})
}

/// [`plan_named`], reporting [`BuildStage::Plan`] when the clean-up is done.
fn plan_named_with(
    module: &mut Module,
    name: Option<&str>,
    progress: &mut dyn FnMut(BuildStage),
) -> Result<(neuronc_ir::Func, NeuronPlan), Error> {
    run_pipeline(module, &Pipeline::parse(CLEANUP)?, &mut PassContext::new())?;
    progress(BuildStage::Plan);
    let func = match name {
        Some(n) => module.func(n).cloned(),
        None => module.entry().cloned(),
    };
    let func = func.ok_or_else(|| match name {
        Some(n) => Error::Run(format!("no function @{n} (after inlining)")),
        None => Error::Run("no entry function (@main or a single public function)".into()),
    })?;
    let plan = plan_function(module, &func, &FusionConfig::default());
    Ok((func, plan))
}

/// `run --engine sim`: plans function `name` as `compile` does (clean-up, layouts,
/// kernels), runs the plan in the functional simulator, and schedules it for `target`
/// for the predicted time.
pub fn simulate(
    mut module: Module,
    name: &str,
    inputs: Vec<Tensor>,
    target: &str,
    auto_cast: AutoCast,
) -> Result<(Vec<Tensor>, Report), Error> {
    let model = target_model(target)?;
    let (func, plan) = plan_named(&mut module, Some(name))?;
    let results = sim::simulate(&module, &func, &plan, &SimOptions { auto_cast }, inputs)
        .map_err(|e| Error::Run(format!("engine simulator: {e}")))?;
    let engine_opts = EngineOptions {
        model,
        auto_cast,
        ..EngineOptions::default()
    };
    let out = compile_function(&module, &func, &plan, &engine_opts)
        .map_err(|e| Error::Run(format!("engine back end: {e}")))?;
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
}

impl Default for BuildOptions {
    /// The command line's defaults: `--target trn1 --auto-cast matmult`.
    fn default() -> Self {
        BuildOptions {
            target: "trn1".into(),
            auto_cast: AutoCast::default(),
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
    let model = target_model(&opts.target)?;
    progress(BuildStage::Cleanup);
    let (func, plan) = plan_named_with(&mut module, None, progress)?;
    let engine_opts = EngineOptions {
        model,
        auto_cast: opts.auto_cast,
        ..EngineOptions::default()
    };
    progress(BuildStage::Lower);
    // The engine program and the HLO module are independent views of the planned module,
    // and so are the program's two text forms: each pair is built on two threads.
    let (out, hlo) = rayon::join(
        || compile_function(&module, &func, &plan, &engine_opts),
        || emit_hlo_module(&module, &HloOptions::default()),
    );
    let out = out.map_err(|e| Error::Run(format!("backend: {e}")))?;
    let hlo = hlo.map_err(|e| Error::Run(e.to_string()))?;
    progress(BuildStage::EmitHlo);
    let compile_time_s = start.elapsed().as_secs_f64();
    let mut report = serde_json::to_value(&out.report).map_err(|e| Error::Run(e.to_string()))?;
    report["compile_time_s"] = json!(compile_time_s);
    report["fusion_kernels"] = json!(plan.fusion.kernels.len());
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
    let v = json!({
        "entry": func.name,
        "inputs": inputs,
        "outputs": outputs,
        "target": opts.target,
        "flags": {"auto_cast": format!("{:?}", opts.auto_cast).to_lowercase()},
        "compiler": {"name": "neuronc-rs", "version": env!("CARGO_PKG_VERSION")},
        "content_hash": format!("{hash:016x}"),
    });
    format!("{v:#}\n")
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
