//! Helpers shared by the tests that run fixtures against their framework outputs
//! (`sim_fixtures`, `hlo_import`, `hlo_text_import`): finding `X.mlir` + `X.npz` pairs, loading a case's
//! module and inputs, and comparing results under the fixture tolerances.

#![allow(dead_code)] // each test binary uses a subset

use libtest_mimic::{Failed, Trial};
use neuronc::ir::Module;
use neuronc_interp::compare::{compare, max_abs, narrow_tolerance};
use neuronc_interp::npz::{self, NpyArray};
use neuronc_interp::Tensor;
use std::path::{Path, PathBuf};

/// Fixtures whose module translated back from an HLO artifact XLA:CPU runs correctly but
/// the interpreter does not, with the reason (`hlo_import`, `hlo_text_import`).
pub const INTERPRETER_GAPS: &[(&str, &str)] = &[
    (
        "jax/topk_approx.mlir",
        "sort with a comparator that is not a strict weak order (`GT FLOAT` with NaN): the \
         result depends on the sort algorithm, and the interpreter's is not XLA's",
    ),
    ("jax/topk_approx_tpu.mlir", "as jax/topk_approx.mlir"),
];

/// Compiles StableHLO `text` (diagnostics named `name`) and runs its entry function in the
/// interpreter: with XLA's float semantics (the frameworks' results, e.g. XLA's
/// `multiply(convert(pred), x) -> select`) unless it computes in bf16/f16, whose callers
/// compare against the trace run the same strict way (see `hlo_import`).
pub fn run_text(text: &str, name: &str, args: Vec<Tensor>) -> Result<Vec<Tensor>, String> {
    let module = neuronc::compile(name, text).map_err(|e| format!("{name}: {e}"))?;
    let func = module.entry().ok_or("no entry")?.name.clone();
    let opts = neuronc_interp::RunOptions {
        float_semantics: if computes_in_half(&module) {
            neuronc_interp::FloatSemantics::Strict
        } else {
            neuronc_interp::FloatSemantics::Xla
        },
        ..Default::default()
    };
    neuronc_interp::run_function(&module, &func, args, &opts).map_err(|e| format!("{name}: {e}"))
}

/// A jax-written HLO artifact `fixtures/hlo/X[.opt].{pb,hlo.txt}` (read through
/// [`load`], so through the driver's input routing) run with XLA float semantics against
/// jax's outputs in `fixtures/hlo/X.npz`.
pub fn run_jax_artifact(path: &Path) -> Result<(), String> {
    let file = path.file_name().and_then(|n| n.to_str()).ok_or("name")?;
    let stem = file.split('.').next().unwrap_or(file);
    let npz_path = path.with_file_name(format!("{stem}.npz"));
    let case = load(path, Some(&npz_path))?;
    let opts = neuronc_interp::RunOptions {
        float_semantics: neuronc_interp::FloatSemantics::Xla,
        ..Default::default()
    };
    let outs = neuronc_interp::run_function(&case.module, &case.func, case.args, &opts)
        .map_err(|e| e.to_string())?;
    check(&outs, None, &case.arrays, 1e-4, 1e-5)
}

/// The files of `dir` whose names end in `suffix`, sorted, with their file names.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<(PathBuf, String)> {
    let mut v: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            name.ends_with(suffix).then_some((p, name))
        })
        .collect();
    v.sort();
    v
}

/// One trial `PREFIX/NAME` per fixture with framework outputs under `root`, running
/// `run(path, rtol, atol)` under the fixture's tolerance; fixtures named in `ignored` are
/// listed but ignored.
pub fn fixture_trials(
    root: &Path,
    prefix: &str,
    ignored: &[(&str, &str)],
    run: fn(&Path, f64, f64) -> Result<(), String>,
) -> Vec<Trial> {
    let mut paths = Vec::new();
    cases(root, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            let (rtol, atol) = tolerance(&name);
            let gap = ignored.iter().any(|(n, _)| *n == name);
            Trial::test(format!("{prefix}/{name}"), move || {
                run(&p, rtol, atol).map_err(Failed::from)
            })
            .with_ignored_flag(gap)
        })
        .collect()
}

/// Every `X.mlir` under `dir` (recursively, sorted) that has an `X.npz` beside it.
pub fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cases(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") && p.with_extension("npz").is_file() {
            out.push(p);
        }
    }
}

/// The fixture tolerances (rtol, atol × max|ref|) of a case named `name`: looser for
/// training steps and gradients, whose outputs sum many rounded terms.
pub fn tolerance(name: &str) -> (f64, f64) {
    if name.contains("train") || name.contains("grad") {
        (1e-3, 1e-3)
    } else {
        (1e-4, 1e-5)
    }
}

/// A loaded case: its text, verified module, entry function, npz arrays and inputs.
pub struct Case {
    pub text: String,
    pub module: Module,
    pub func: String,
    pub arrays: Vec<(String, NpyArray)>,
    pub args: Vec<Tensor>,
}

/// Loads `path` and the inputs `arg_*` of its `npz` (default: beside it).
pub fn load(path: &Path, npz_path: Option<&Path>) -> Result<Case, String> {
    let source =
        neuronc::Source::read(path, path.display().to_string()).map_err(|e| e.to_string())?;
    let module = neuronc::compile_source(&source).map_err(|e| e.to_string())?;
    let func = module.entry().ok_or("no entry")?.name.clone();
    let npz_path = npz_path.map_or_else(|| path.with_extension("npz"), Path::to_path_buf);
    let arrays = npz::read_npz(&npz_path).map_err(|e| e.to_string())?;
    let types = neuronc_interp::arg_types(&module, &func).map_err(|e| e.to_string())?;
    let args = npz::load_args(&arrays, &types).map_err(|e| e.to_string())?;
    Ok(Case {
        text: source.text.clone(),
        module,
        func,
        arrays,
        args,
    })
}

/// Compares each result with its reference (`reference[i]`, else `out_i` of `arrays`)
/// under rtol and atol × max|ref|, widened to a few ulps for bf16/f16 results.
pub fn check(
    outs: &[Tensor],
    reference: Option<&[Tensor]>,
    arrays: &[(String, NpyArray)],
    rtol: f64,
    atol_factor: f64,
) -> Result<(), String> {
    for (i, o) in outs.iter().enumerate() {
        let key = npz::out_key(i);
        let exp = match reference {
            Some(r) => r.get(i).cloned().ok_or("missing output")?,
            None => npz::take(arrays, &key, o.ty()).map_err(|e| format!("{key}: {e}"))?,
        };
        let (rtol, atol_factor) = narrow_tolerance(o.elem(), rtol, atol_factor);
        compare(&exp, o, rtol, atol_factor * max_abs(&exp)).map_err(|e| format!("{key}: {e}"))?;
    }
    Ok(())
}

/// Whether some value of the module has a bf16 or f16 element type.
pub fn computes_in_half(m: &Module) -> bool {
    use neuronc::ir::ElemType;
    (0..m.values.len()).any(|i| {
        m.tensor_type(neuronc::ir::ValueId(i as u32))
            .is_some_and(|t| matches!(t.elem, ElemType::BF16 | ElemType::F16))
    })
}
