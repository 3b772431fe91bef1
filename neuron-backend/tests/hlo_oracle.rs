//! Oracle test of the HLO emitter: for every fixture `fixtures/**/*.mlir` (and
//! `neuron-backend/tests/data/*.mlir`: `special_fns` from `gen_special.py`,
//! `shard_map_channels` a jax `shard_map` trace of probe round 14 whose collectives all
//! share channel handle 1, `many_args` 1001 parameters and results from `gen_many_args.py`,
//! past where `arg_*` / `out_*` keys stop sorting as strings in index order) with a sibling
//! `.npz` (framework inputs `arg_*` and outputs `out_*`), the emitted `HloModuleProto` is
//! loaded and run by real XLA (jaxlib, CPU) through `tools/run_hlo_proto.py`, and its
//! results must match the framework outputs: `|got - ref| <= atol*max|ref| + rtol*|ref|`
//! with rtol = 1e-4, atol = 1e-5 (1e-3 for both in `*train*` fixtures). The HLO text
//! artifact is checked the same way (parsed by XLA's HLO text parser).
//!
//! Python: env `NEURONC_PYTHON`, else `/work/venv/bin/python`, else `.venv/bin/python` in
//! the repository root; when none exists every trial is ignored with a printed notice.
//! All fixtures are emitted first and run through one python process (`--batch`), so
//! jax is imported once.

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc_backend::hlo::{emit_hlo_module, HloOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate lives in the workspace")
        .to_path_buf()
}

fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NEURONC_PYTHON") {
        let p = PathBuf::from(p);
        return p.exists().then_some(p);
    }
    [
        PathBuf::from("/work/venv/bin/python"),
        repo_root().join(".venv/bin/python"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fixtures(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") && p.with_extension("npz").exists() {
            out.push(p);
        }
    }
}

/// Fixtures the emitter must refuse, with the reason its `Unsupported` error must name.
/// (jax's typed-FFI LAPACK calls used to be here; they are now passed through with their
/// layout constraints and run by XLA:CPU like any other fixture.)
const EXPECTED_UNSUPPORTED: &[(&str, &str)] = &[];

/// Fixtures whose `out_*` are XLA:CPU's own results on the text (`neuronc-rs fmt` of it)
/// and depend on the host XLA:CPU runs on: `image_ops8_train_step`'s gradient depends on
/// bitwise equality between a matmul recomputed in the backward graph and the forward's
/// stored result (`fixtures/gen/probe8_fixtures.py`), which holds on some hosts and not
/// on others (AVX-512). Their reference is recomputed on this host the same way, XLA:CPU
/// on our printed text (`tools/xla_run.py`), so the emitted HLO is still compared with
/// XLA's own reading of the StableHLO program.
const HOST_REFERENCE: &[&str] = &["fixtures/models/image_ops8_train_step.mlir"];

/// XLA:CPU's outputs on `neuronc-rs fmt` of `mlir` for the fixture's inputs, as an npz in
/// `dir`.
fn host_reference(py: &Path, mlir: &Path, stem: &str, dir: &Path) -> Result<PathBuf, String> {
    let src = std::fs::read_to_string(mlir).map_err(|e| e.to_string())?;
    let module = neuronc_ir::parse_module(&src).map_err(|e| format!("parse: {e}"))?;
    let text = neuronc_ir::print_module(&module, &neuronc_ir::PrintOptions::default());
    let fmt = dir.join(format!("{stem}.fmt.mlir"));
    let out = dir.join(format!("{stem}.ref.npz"));
    std::fs::write(&fmt, text).map_err(|e| e.to_string())?;
    let res = Command::new(py)
        .arg(repo_root().join("tools/xla_run.py"))
        .arg(&fmt)
        .arg("--inputs")
        .arg(mlir.with_extension("npz"))
        .arg("--output")
        .arg(&out)
        .output()
        .map_err(|e| e.to_string())?;
    if !res.status.success() {
        return Err(format!(
            "XLA:CPU on the printed text: {}",
            String::from_utf8_lossy(&res.stderr)
        ));
    }
    Ok(out)
}

/// One fixture's emitted artifacts, or why emission failed.
struct Emitted {
    name: String,
    result: Result<Artifacts, String>,
}

/// The emitted proto and text, the npz of inputs, the npz of reference outputs, the
/// tolerance.
type Artifacts = (PathBuf, PathBuf, PathBuf, PathBuf, f64);

fn emit(py: &Path, mlir: &Path, name: &str, dir: &Path) -> Result<Artifacts, String> {
    let src = std::fs::read_to_string(mlir).map_err(|e| e.to_string())?;
    let module = neuronc_ir::parse_module(&src).map_err(|e| format!("parse: {e}"))?;
    let art = emit_hlo_module(&module, &HloOptions::default()).map_err(|e| e.to_string())?;
    let rel = mlir.strip_prefix(repo_root()).unwrap_or(mlir);
    let stem = rel.to_string_lossy().replace(['/', '.'], "_");
    let pb = dir.join(format!("{stem}.hlo.pb"));
    let txt = dir.join(format!("{stem}.hlo.txt"));
    std::fs::write(&pb, &art.bytes).map_err(|e| e.to_string())?;
    std::fs::write(&txt, &art.text).map_err(|e| e.to_string())?;
    let tol = if stem.contains("train") { 1e-3 } else { 1e-4 };
    let inputs = mlir.with_extension("npz");
    let reference = if HOST_REFERENCE.contains(&name) {
        host_reference(py, mlir, &stem, dir)?
    } else {
        inputs.clone()
    };
    Ok((pb, txt, inputs, reference, tol))
}

/// Runs all jobs in one python process; returns model path -> (ok, report).
fn run_batch(
    py: &Path,
    jobs: &[(PathBuf, bool, PathBuf, PathBuf, f64)],
    dir: &Path,
) -> HashMap<String, (bool, String)> {
    let mut lines = String::new();
    for (model, text, npz, reference, tol) in jobs {
        let atol = if *tol > 1e-4 { *tol } else { 1e-5 };
        let job = serde_json::json!({
            "model": model, "text": text, "inputs": npz, "compare": reference,
            "rtol": tol, "atol": atol,
        });
        lines.push_str(&job.to_string());
        lines.push('\n');
    }
    let file = dir.join("jobs.jsonl");
    let mut out = HashMap::new();
    if std::fs::write(&file, lines).is_err() {
        return out;
    }
    let Ok(res) = Command::new(py)
        .arg(repo_root().join("tools/run_hlo_proto.py"))
        .arg("--batch")
        .arg(&file)
        .output()
    else {
        return out;
    };
    for line in String::from_utf8_lossy(&res.stdout).lines() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
            let model = v["model"].as_str().unwrap_or_default().to_string();
            let ok = v["ok"].as_bool().unwrap_or(false);
            let report = v["report"].as_str().unwrap_or_default().to_string();
            out.insert(model, (ok, report));
        }
    }
    if out.is_empty() && !jobs.is_empty() {
        eprintln!(
            "hlo_oracle: batch run failed: {}",
            String::from_utf8_lossy(&res.stderr)
        );
    }
    out
}

fn verdict(e: &Emitted, results: &HashMap<String, (bool, String)>) -> Result<(), Failed> {
    if let Some((_, why)) = EXPECTED_UNSUPPORTED.iter().find(|(n, _)| *n == e.name) {
        return match &e.result {
            Err(m) if m.contains("cannot emit HLO") && m.contains(why) => Ok(()),
            Err(m) => Err(Failed::from(format!(
                "expected unsupported ({why}), got: {m}"
            ))),
            Ok(_) => Err(Failed::from(format!(
                "expected unsupported ({why}) but it emitted: move it out of EXPECTED_UNSUPPORTED"
            ))),
        };
    }
    let (pb, txt, _, _, _) = e.result.as_ref().map_err(|m| Failed::from(m.clone()))?;
    let mut msg = String::new();
    for (kind, path) in [("proto", pb), ("text", txt)] {
        match results.get(&path.display().to_string()) {
            Some((true, _)) => {}
            Some((false, report)) => msg.push_str(&format!("{kind}: {report}\n")),
            None => msg.push_str(&format!("{kind}: no result from the oracle\n")),
        }
    }
    if msg.is_empty() {
        Ok(())
    } else {
        Err(Failed::from(msg))
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut files = Vec::new();
    fixtures(&repo_root().join("fixtures"), &mut files);
    // This crate's own fixture (special functions; see tests/data/gen_special.py).
    fixtures(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        &mut files,
    );
    let Some(py) = python() else {
        println!("hlo_oracle: no python with jaxlib (NEURONC_PYTHON, /work/venv, .venv): skipped");
        let trials = files
            .iter()
            .map(|f| Trial::test(f.display().to_string(), || Ok(())).with_ignored_flag(true))
            .collect();
        libtest_mimic::run(&args, trials).exit();
    };
    // NEURONC_HLO_KEEP=DIR keeps the emitted artifacts there for inspection.
    let keep = std::env::var_os("NEURONC_HLO_KEEP").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("neuronc_hlo_oracle_{}", std::process::id()))
    });
    let _ = std::fs::create_dir_all(&dir);
    let filter = args.filter.clone().unwrap_or_default();
    let emitted: Vec<Emitted> = files
        .iter()
        .map(|f| {
            let name = f
                .strip_prefix(repo_root())
                .unwrap_or(f)
                .display()
                .to_string();
            let result = if name.contains(&filter) {
                emit(&py, f, &name, &dir)
            } else {
                Err("filtered out".into())
            };
            Emitted { name, result }
        })
        .collect();
    let mut jobs = Vec::new();
    for e in &emitted {
        if let Ok((pb, txt, npz, reference, tol)) = &e.result {
            jobs.push((pb.clone(), false, npz.clone(), reference.clone(), *tol));
            jobs.push((txt.clone(), true, npz.clone(), reference.clone(), *tol));
        }
    }
    let results = std::sync::Arc::new(run_batch(&py, &jobs, &dir));
    let trials = emitted
        .into_iter()
        .map(|e| {
            let results = results.clone();
            Trial::test(e.name.clone(), move || verdict(&e, &results))
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    conclusion.exit();
}
