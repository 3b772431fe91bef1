//! Oracle test of the HLO emitter: for every fixture `fixtures/**/*.mlir` with a sibling
//! `.npz` (framework inputs `arg_*` and outputs `out_*`), the emitted `HloModuleProto` is
//! loaded and run by real XLA (jaxlib, CPU) through `tools/run_hlo_proto.py`, and its
//! results must match the framework outputs: `|got - ref| <= atol*max|ref| + rtol*|ref|`
//! with rtol = 1e-4, atol = 1e-5 (1e-3 for both in `*train*` fixtures). The HLO text
//! artifact is checked the same way (parsed by XLA's HLO text parser).
//!
//! Python: env `NEURONC_PYTHON`, else `/work/venv/bin/python`, else `.venv/bin/python` in
//! the repository root; when none exists every trial is ignored with a printed notice.
//! Fixtures the IR parser rejects are not this test's concern and are skipped (ignored).

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc_backend::hlo::{emit_hlo_module, HloOptions};
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

fn run_script(py: &Path, model: &Path, text: bool, npz: &Path, tol: f64) -> Result<String, Failed> {
    let mut cmd = Command::new(py);
    cmd.arg(repo_root().join("tools/run_hlo_proto.py")).arg(model);
    if text {
        cmd.arg("--text");
    }
    let out = cmd
        .arg("--inputs")
        .arg(npz)
        .arg("--compare")
        .arg(npz)
        .arg("--rtol")
        .arg(tol.to_string())
        .arg("--atol")
        .arg(if tol > 1e-4 { tol } else { 1e-5 }.to_string())
        .output()
        .map_err(|e| Failed::from(format!("cannot run python: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if out.status.success() {
        Ok(stdout)
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<_> = stderr.lines().rev().take(6).collect();
        Err(Failed::from(format!(
            "{}{}",
            stdout,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )))
    }
}

fn check(py: &Path, mlir: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(mlir).map_err(|e| Failed::from(e.to_string()))?;
    let module = neuronc_ir::parse_module(&src).map_err(|e| Failed::from(e.to_string()))?;
    let t0 = std::time::Instant::now();
    let art = emit_hlo_module(&module, &HloOptions::default()).map_err(|e| Failed::from(e.to_string()))?;
    let emit_s = t0.elapsed().as_secs_f64();
    let dir = std::env::temp_dir().join(format!("neuronc_hlo_oracle_{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failed::from(e.to_string()))?;
    let stem = mlir.file_stem().and_then(|s| s.to_str()).unwrap_or("m");
    let pb = dir.join(format!("{stem}.hlo.pb"));
    let txt = dir.join(format!("{stem}.hlo.txt"));
    std::fs::write(&pb, &art.bytes).map_err(|e| Failed::from(e.to_string()))?;
    std::fs::write(&txt, &art.text).map_err(|e| Failed::from(e.to_string()))?;
    let npz = mlir.with_extension("npz");
    let tol = if stem.contains("train") { 1e-3 } else { 1e-4 };
    let a = run_script(py, &pb, false, &npz, tol).map_err(|e| Failed::from(format!("proto: {}", e.message().unwrap_or(""))))?;
    let b = run_script(py, &txt, true, &npz, tol).map_err(|e| Failed::from(format!("text: {}", e.message().unwrap_or(""))))?;
    let _ = (a, b);
    println!(
        "  {}: {} bytes, emitted in {:.1} ms",
        mlir.display(),
        art.bytes.len(),
        emit_s * 1e3
    );
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut files = Vec::new();
    fixtures(&repo_root().join("fixtures"), &mut files);
    let py = python();
    if py.is_none() {
        println!("hlo_oracle: no python with jaxlib (NEURONC_PYTHON, /work/venv, .venv): skipped");
    }
    let trials = files
        .into_iter()
        .map(|f| {
            let name = f
                .strip_prefix(repo_root())
                .unwrap_or(&f)
                .display()
                .to_string();
            let py = py.clone();
            let ignored = py.is_none()
                || std::fs::read_to_string(&f)
                    .ok()
                    .and_then(|s| neuronc_ir::parse_module(&s).ok())
                    .is_none();
            Trial::test(name, move || match py {
                Some(py) => check(&py, &f),
                None => Ok(()),
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
