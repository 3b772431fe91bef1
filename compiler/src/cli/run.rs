//! `neuronc-rs run FILE [--entry F] [--inputs IN.npz | --random-inputs SEED] [-o OUT.npz]
//! [--expected EXP.npz] [--engine interp|sim] [--float-semantics xla|strict]
//! [--recompute-for-contraction]`: runs a
//! function with the reference interpreter (`neuronc-interp`), or (`--engine sim`)
//! compiles it as `compile` does and runs the kernels in the NeuronCore functional
//! simulator (`neuronc_backend::sim`).
//!
//! Both engines follow XLA:CPU's bf16 excess precision by default (`xla`: what jax and
//! torch_xla compute, see `neuronc_interp::excess_precision`; the simulator runs the
//! program compiled from the rewritten module, see `crate::build`); `strict` rounds every
//! op result as the StableHLO spec says. [`Semantics`] is the one parser of
//! `--float-semantics`, shared with `compile`.
//!
//! Inputs are the `arg_000`, `arg_001`, ... arrays of an `.npz` file (default: `FILE`
//! with the extension `.npz`, when it exists), or deterministic pseudo-random values
//! (`--random-inputs SEED`; `--save-inputs` writes them for other tools). Results are
//! printed one per line (values too when small), optionally written as `out_000`, ... to
//! `-o`, and optionally compared with the `out_*` arrays of `--expected` (exit 1 on any
//! mismatch).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use neuronc_interp::{npz, FloatSemantics, RunOptions, Tensor};

use super::compile::Cast;
use super::{input, random, Command, Ctx, Status};
use crate::build::BuildOptions;
use crate::error::Error;
use crate::source::Unit;

/// Results with at most this many elements are printed with their values.
const MAX_PRINTED_ELEMENTS: usize = 16;

/// Rounding semantics (`--float-semantics` of `run` and `compile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Semantics {
    /// XLA:CPU's: a bf16 result read by a `convert` to f32 keeps f32 precision, bf16
    /// sums round every step in XLA's order.
    Xla,
    /// The StableHLO spec's: every op result is rounded to its element type.
    Strict,
}

impl Semantics {
    pub fn to_interp(self) -> FloatSemantics {
        match self {
            Semantics::Xla => FloatSemantics::Xla,
            Semantics::Strict => FloatSemantics::Strict,
        }
    }
}

/// Who executes the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    Interp,
    Sim,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Function to run (default: `main`, else the only public function).
    #[arg(long, value_name = "NAME", alias = "entry")]
    pub function: Option<String>,
    /// `.npz` with the arguments `arg_000`, ... (default: FILE with extension `.npz`).
    #[arg(long, value_name = "IN.npz", conflicts_with = "random_inputs")]
    pub inputs: Option<PathBuf>,
    /// Pseudo-random arguments from this seed: floats in [-1, 1), integers in [0, 4),
    /// booleans by coin flip (the distributions of `tools/xla_run.py --random-inputs`).
    #[arg(long, value_name = "SEED")]
    pub random_inputs: Option<u64>,
    /// Also write the arguments used as `arg_000`, ... to this `.npz`.
    #[arg(long, value_name = "IN.npz")]
    pub save_inputs: Option<PathBuf>,
    /// `interp`: the reference interpreter; `sim`: the compiled kernels in the NeuronCore
    /// functional simulator.
    #[arg(long, value_enum, default_value = "interp")]
    pub engine: Engine,
    /// `xla` matches what XLA:CPU (jax, torch_xla) computes for bf16 programs (a bf16 op
    /// result converted to f32 is not rounded to bf16 first; bf16 sums round every step in
    /// XLA's order); `strict` rounds every op result to its type, as the StableHLO spec
    /// says. With `--engine sim` it chooses the program compiled, as in `compile`.
    #[arg(long, value_enum, default_value = "xla")]
    pub float_semantics: Semantics,
    /// With `--engine sim`: the NeuronCore generation.
    #[arg(long, default_value = "trn1", value_parser = ["trn1", "trn2", "inf2"])]
    pub target: String,
    /// With `--engine sim`: which matmul operands run in bf16 (default: none, so results
    /// are comparable with the framework's f32 outputs).
    #[arg(long, value_enum, default_value = "none")]
    pub auto_cast: Cast,
    /// With `--engine sim`: plan as `compile --recompute-for-contraction=WHEN` does.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto", num_args = 0..=1,
          require_equals = true, default_missing_value = "on")]
    pub recompute_for_contraction: crate::build::Recompute,
    /// Write the results as `out_000`, ... to this `.npz`.
    #[arg(short, long, value_name = "OUT.npz")]
    pub output: Option<PathBuf>,
    /// Compare the results with the `out_*` arrays of this `.npz`.
    #[arg(long, value_name = "EXP.npz")]
    pub expected: Option<PathBuf>,
    /// Relative tolerance of `--expected`.
    #[arg(long, default_value_t = 1e-5)]
    pub rtol: f64,
    /// Absolute tolerance of `--expected`.
    #[arg(long, default_value_t = 1e-6)]
    pub atol: f64,
    /// Number of simulated replicas.
    #[arg(long, default_value_t = 1)]
    pub replicas: u32,
    /// Number of simulated partitions.
    #[arg(long, default_value_t = 1)]
    pub partitions: u32,
}

impl Command for RunArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let source = input::read_source(ctx, &self.file)?;
        let unit = Unit::whole(&source);
        let module = match ctx.session.load(&unit) {
            Ok(m) => m,
            Err(e) => {
                ctx.report(&e);
                return Ok(Status::Invalid);
            }
        };
        let func = match &self.function {
            Some(f) => f.clone(),
            None => module.entry().map(|f| f.name.clone()).ok_or_else(|| {
                Error::Run("no `main` or single public function; use --function".into())
            })?,
        };
        let inputs = self.load_inputs(ctx, &module, &func)?;
        if let Some(path) = &self.save_inputs {
            let items: Vec<(String, &Tensor)> = inputs
                .iter()
                .enumerate()
                .map(|(i, t)| (npz::arg_key(i), t))
                .collect();
            npz::write_npz(&ctx.resolve(path), &items).map_err(|source| Error::Npz {
                path: path.display().to_string(),
                source,
            })?;
        }
        let mut report = String::new();
        let results = match self.engine {
            Engine::Interp => {
                let options = RunOptions {
                    replicas: self.replicas,
                    partitions: self.partitions,
                    float_semantics: self.float_semantics.to_interp(),
                };
                ctx.session.run(&module, &func, inputs, &options)?
            }
            Engine::Sim => {
                let opts = BuildOptions {
                    target: self.target.clone(),
                    auto_cast: self.auto_cast.to_auto_cast(),
                    float_semantics: self.float_semantics.to_interp(),
                    recompute_for_contraction: self.recompute_for_contraction,
                };
                let (results, r) = crate::build::simulate(module, &func, inputs, &opts)?;
                let _ = writeln!(
                    report,
                    "engine sim ({}): {} kernels, {} instructions, predicted {:.3} ms",
                    self.target,
                    r.kernels,
                    r.instructions,
                    r.predicted_time_s * 1e3
                );
                results
            }
        };
        for (i, t) in results.iter().enumerate() {
            let _ = writeln!(report, "{}: {}", npz::out_key(i), describe(t));
        }
        let status = match &self.expected {
            Some(path) => compare(ctx, path, &results, self.rtol, self.atol, &mut report)?,
            None => Status::Ok,
        };
        input::write_output(ctx, None, &report)?;
        if let Some(path) = &self.output {
            npz::save_outputs(&ctx.resolve(path), &results).map_err(|source| Error::Npz {
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(status)
    }
}

impl RunArgs {
    /// The function's arguments from `--inputs` (or FILE.npz); none if it takes none.
    fn load_inputs(
        &self,
        ctx: &Ctx<'_>,
        module: &neuronc_ir::Module,
        func: &str,
    ) -> Result<Vec<Tensor>, Error> {
        let types = neuronc_interp::arg_types(module, func)?;
        if let Some(seed) = self.random_inputs {
            return Ok(random::inputs(&types, seed));
        }
        let path = match &self.inputs {
            Some(p) => p.clone(),
            None if self.file != "-" => Path::new(&self.file).with_extension("npz"),
            None => PathBuf::new(),
        };
        let resolved = ctx.resolve(&path);
        if self.inputs.is_none() && (types.is_empty() || !resolved.is_file()) {
            if types.is_empty() {
                return Ok(Vec::new());
            }
            return Err(Error::Run(format!(
                "@{func} takes {} argument(s); pass --inputs IN.npz",
                types.len()
            )));
        }
        let npz_err = |source| Error::Npz {
            path: path.display().to_string(),
            source,
        };
        let arrays = npz::read_npz(&resolved).map_err(npz_err)?;
        npz::load_args(&arrays, &types).map_err(npz_err)
    }
}

/// Compares `results` with `out_*` of `path`, appending one verdict line per result.
fn compare(
    ctx: &Ctx<'_>,
    path: &Path,
    results: &[Tensor],
    rtol: f64,
    atol: f64,
    report: &mut String,
) -> Result<Status, Error> {
    let npz_err = |source| Error::Npz {
        path: path.display().to_string(),
        source,
    };
    let arrays = npz::read_npz(&ctx.resolve(path)).map_err(npz_err)?;
    let mut status = Status::Ok;
    for (i, actual) in results.iter().enumerate() {
        let key = npz::out_key(i);
        let expected = npz::take(&arrays, &key, actual.ty()).map_err(npz_err)?;
        match neuronc_interp::compare(&expected, actual, rtol, atol) {
            Ok(()) => {
                let _ = writeln!(report, "{key}: matches {}", path.display());
            }
            Err(m) => {
                status = Status::Invalid;
                let _ = writeln!(report, "{key}: MISMATCH: {m}");
            }
        }
    }
    Ok(status)
}

/// `tensor<2x3xf32>`, followed by the values when there are few.
fn describe(t: &Tensor) -> String {
    let mut s = String::from("tensor<");
    for d in t.shape() {
        let _ = write!(s, "{d}x");
    }
    let _ = write!(s, "{}>", t.elem());
    if t.len() <= MAX_PRINTED_ELEMENTS && !t.elem().is_complex() {
        let narrow = t.elem().is_float() && t.elem().bits() <= 32;
        let values: Vec<String> = t
            .to_f64_vec()
            .iter()
            .map(|&v| {
                if narrow {
                    (v as f32).to_string()
                } else {
                    v.to_string()
                }
            })
            .collect();
        let _ = write!(s, " = [{}]", values.join(", "));
    }
    s
}
