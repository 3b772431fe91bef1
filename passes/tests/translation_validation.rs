//! Translation validation: for every `fixtures/**/*.mlir` with a sibling `.npz` (inputs
//! `arg_000..`), the interpreter's outputs of the entry function before and after `-O2`
//! must agree within `rtol = 1e-4` (`1e-3` for `*train*` traces), with an absolute floor of
//! `rtol * max|reference|` per output so that values near zero compare sensibly. Outputs of
//! low-precision types get at least two units in the last place of their type (a rewrite
//! may legitimately move one rounding step: `bf16` 1e-2, `f16` 2e-3, 4/6/8-bit floats
//! 0.25). The
//! optimized module must also verify and survive a print/parse round trip.
//!
//! Each fixture is validated twice: under `-O2`, and under `-O2` with
//! `recompute-for-contraction` before `neuron-fuse` (what `compile
//! --recompute-for-contraction` plans), trial names prefixed `recompute/`.
//!
//! One trial per fixture and pipeline (libtest-mimic). A fixture the interpreter cannot run *before*
//! optimization cannot be validated: it passes with a `skipped:` line on stderr. Traces above
//! [`DEBUG_SIZE_LIMIT`] bytes are ignored in debug builds (run them with `--release` or
//! `NEURONC_TV_ALL=1`).

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc_interp::{arg_types, compare, npz, run_function, RunOptions, Tensor};
use neuronc_ir::{parse_module, print_module, verify_module, ElemType, Module, PrintOptions};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::path::{Path, PathBuf};

/// Fixture text size above which debug builds skip the fixture.
const DEBUG_SIZE_LIMIT: u64 = 400_000;

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") && p.with_extension("npz").exists() {
            out.push(p);
        }
    }
}

fn entry_name(m: &Module) -> Result<String, Failed> {
    m.entry()
        .map(|f| f.name.clone())
        .ok_or_else(|| "no entry function".into())
}

/// Runs the entry function on the fixture's inputs.
fn run(m: &Module, inputs: &[Tensor]) -> Result<Vec<Tensor>, String> {
    let name = entry_name(m).map_err(|e| format!("{e:?}"))?;
    run_function(m, &name, inputs.to_vec(), &RunOptions::default()).map_err(|e| e.to_string())
}

/// `-O2` with `recompute-for-contraction` (and the `dce` it needs) before `neuron-fuse`.
const O2_RECOMPUTE: &str =
    "inline,decompose-batch-norm,fixpoint<8>(canonicalize,cse,dce,narrow-index),\
     sink-constants,recompute-for-contraction,dce,neuron-fuse,dce,duplicate-function-elimination";

/// The pipeline a trial validates: `-O2`, or [`O2_RECOMPUTE`].
fn pipeline(recompute: bool) -> Result<Pipeline, Failed> {
    let p = if recompute {
        Pipeline::parse(O2_RECOMPUTE)
    } else {
        Pipeline::preset(2)
    };
    p.map_err(|e| e.to_string().into())
}

/// `Ok(None)`: the reference run itself is impossible (reported as ignored).
fn validate(path: &Path, recompute: bool) -> Result<Option<String>, Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut m = parse_module(&text).map_err(|e| format!("parse: {e}"))?;
    verify_module(&m).map_err(|e| format!("input does not verify: {e}"))?;
    let arrays = npz::read_npz(&path.with_extension("npz")).map_err(|e| e.to_string())?;
    let types = arg_types(&m, &entry_name(&m)?).map_err(|e| e.to_string())?;
    let inputs = npz::load_args(&arrays, &types).map_err(|e| e.to_string())?;
    let before = match run(&m, &inputs) {
        Ok(v) => v,
        Err(e) => return Ok(Some(format!("interpreter cannot run the input: {e}"))),
    };
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    run_pipeline(&mut m, &pipeline(recompute)?, &mut ctx).map_err(|e| e.to_string())?;
    let printed = print_module(&m, &PrintOptions::default());
    let reparsed =
        parse_module(&printed).map_err(|e| format!("optimized output does not re-parse: {e}"))?;
    verify_module(&reparsed).map_err(|e| format!("re-parsed output does not verify: {e}"))?;
    let after =
        run(&reparsed, &inputs).map_err(|e| format!("optimized module fails to run: {e}"))?;
    if before.len() != after.len() {
        return Err(format!("{} outputs before, {} after", before.len(), after.len()).into());
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let rtol: f64 = if name.contains("train") { 1e-3 } else { 1e-4 };
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        let rtol = rtol.max(precision_floor(b.elem()));
        let atol = rtol * compare::max_abs(b);
        compare(b, a, rtol, atol).map_err(|e| format!("output {i}: {e}"))?;
    }
    Ok(None)
}

/// Two units in the last place (relative) of low-precision float types; 0 otherwise.
fn precision_floor(e: ElemType) -> f64 {
    match e {
        ElemType::BF16 => 1e-2,
        ElemType::F16 => 2e-3,
        ElemType::F8(_) => 0.25,
        _ => 0.0,
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut files = Vec::new();
    collect(&fixtures_root(), &mut files);
    let all = std::env::var_os("NEURONC_TV_ALL").is_some() || !cfg!(debug_assertions);
    let trials = files
        .into_iter()
        .flat_map(|path| {
            let name = path
                .strip_prefix(fixtures_root())
                .unwrap_or(&path)
                .display()
                .to_string();
            let big = std::fs::metadata(&path).map_or(0, |m| m.len()) > DEBUG_SIZE_LIMIT;
            [false, true].map(|recompute| {
                let path = path.clone();
                let name = if recompute {
                    format!("recompute/{name}")
                } else {
                    name.clone()
                };
                Trial::test(name, move || match validate(&path, recompute)? {
                    None => Ok(()),
                    Some(reason) => {
                        eprintln!("{}: skipped: {reason}", path.display());
                        Ok(())
                    }
                })
                .with_ignored_flag(big && !all)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
