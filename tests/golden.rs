//! `cargo test --test golden`: the golden-file runner and the real-trace checks.
//!
//! Trials (filter by name as usual: `cargo test --test golden -- NAME`):
//! * `golden/<path>` — every `.mlir` file under `fixtures/` with a `// RUN:` line, run by
//!   [`neuronc::golden::run_file`] (the same runner as `neuronc-rs test`);
//! * `snapshot/<dir>/<stem>` — insta snapshot of the `fmt` output of every real trace
//!   under `fixtures/models/` and `fixtures/jax/` (snapshots in `tests/snapshots/`;
//!   accept new ones with `INSTA_UPDATE=always` and review the diff);
//! * `roundtrip/<dir>/<stem>` — the `fmt` output re-parses, re-verifies and prints to the
//!   same bytes (print fixpoint);
//! * `opt/<dir>/<stem>` and `nir/<dir>/<stem>` — for traces of at most
//!   [`SMALL_TRACE_BYTES`], insta snapshots of the `-O2` output (verifier after every pass)
//!   and of the `program.nir` that `compile` writes (trn1, default auto-cast): the
//!   optimized IR and the engine program are reviewed as diffs whenever a pass or the
//!   back end changes them;
//! * `jaxlib_accepts_fmt` — jaxlib's MLIR parser and verifier accept every `fmt` output
//!   (oracle: `tools/mlir_check.py`, run with `$NEURONC_PYTHON`, default
//!   `.venv/bin/python`; the trial is ignored when neither is set up).
//!
//! Traces in [`REJECTED`] use features neuronc-rs rejects by design; their trial checks
//! that loading fails with a diagnostic saying why. `op_zoo.mlir` (the concatenation of
//! the other jax fixtures into nested modules) is skipped: each part is tested on its own.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc::build::{build, BuildOptions};
use neuronc::ir::PrintOptions;
use neuronc::{Session, Source, Unit};
use neuronc_backend::engine::AutoCast;
use neuronc_passes::manager::{run_pipeline, OptOptions};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("compiler/ has a parent")
        .to_path_buf()
}

/// `a/b/c.mlir` relative to `base`, without extension, with `/` separators.
fn trial_name(base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path).with_extension("");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Traces that must be rejected, with a word the diagnostic must contain. Dynamic shapes
/// are out of scope (issue 2: "dynamic dimensions may be rejected with a clear error").
const REJECTED: &[(&str, &str)] = &[("jax/parse_only_dynamic", "dynamic")];

/// Traces (source bytes) small enough for the `opt/` and `nir/` snapshots: those texts
/// change with every pass or back-end change and each change is reviewed, so the set is
/// kept to what a reviewer can read.
const SMALL_TRACE_BYTES: u64 = 16 * 1024;

/// Concatenations of other fixtures, not traces of their own.
const SKIPPED: &[&str] = &["jax/op_zoo"];

/// Real traces: every `.mlir` directly under `fixtures/models` and `fixtures/jax`.
fn traces(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["fixtures/models", "fixtures/jax"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            out.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "mlir")),
            );
        }
    }
    out.sort();
    out
}

/// Parses, verifies and prints a file; the error is the rendered diagnostics.
fn fmt_file(path: &Path) -> Result<String, String> {
    let source = Source::read(path, path.display().to_string()).map_err(|e| e.to_string())?;
    fmt_source(&source)
}

fn fmt_source(source: &std::sync::Arc<Source>) -> Result<String, String> {
    let mut session = Session::new();
    let module = session
        .load(&Unit::whole(source))
        .map_err(|e| match e.diagnostics() {
            Some(d) => neuronc::cli::render::render(d, false).0,
            None => e.to_string(),
        })?;
    Ok(session.print(&module, &PrintOptions::default()))
}

fn snapshot(root: &Path, name: &str, path: &Path) -> Result<(), Failed> {
    snapshot_text(root, name, path, fmt_file(path)?)
}

fn snapshot_text(root: &Path, name: &str, path: &Path, text: String) -> Result<(), Failed> {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root.join("tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(path);
    let snap_name = name.replace('/', "__");
    settings.bind(|| insta::assert_snapshot!(snap_name, text));
    Ok(())
}

fn load(path: &Path) -> Result<(Session, neuronc::ir::Module), String> {
    let source = Source::read(path, path.display().to_string()).map_err(|e| e.to_string())?;
    let mut session = Session::new();
    let module = session
        .load(&Unit::whole(&source))
        .map_err(|e| e.to_string())?;
    Ok((session, module))
}

/// `opt -O2 --verify-each` output of a trace.
fn opt_o2(path: &Path) -> Result<String, String> {
    let (mut session, mut module) = load(path)?;
    let options = OptOptions {
        opt_level: Some(2),
        verify_each: true,
        ..OptOptions::default()
    };
    let pipeline = options.pipeline().map_err(|e| e.to_string())?;
    let mut ctx = options.context().map_err(|e| e.to_string())?;
    run_pipeline(&mut module, &pipeline, &mut ctx).map_err(|e| e.to_string())?;
    Ok(session.print(&module, &PrintOptions::default()))
}

/// The `program.nir` that `compile` (trn1, default auto-cast) writes for a trace.
fn program_nir(path: &Path) -> Result<String, String> {
    let (_, module) = load(path)?;
    let options = BuildOptions {
        target: "trn1".to_string(),
        auto_cast: AutoCast::default(),
        ..BuildOptions::default()
    };
    let artifacts = build(module, &options).map_err(|e| e.to_string())?;
    let (_, bytes) = artifacts
        .files
        .into_iter()
        .find(|(name, _)| *name == "program.nir")
        .ok_or("compile wrote no program.nir")?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

fn roundtrip(path: &Path) -> Result<(), Failed> {
    let first = fmt_file(path)?;
    let again = fmt_source(&Source::new(
        format!("fmt({})", path.display()),
        first.clone(),
    ))
    .map_err(|e| format!("the fmt output does not load again:\n{e}"))?;
    if again != first {
        let diff = similar::TextDiff::from_lines(&first, &again)
            .unified_diff()
            .header("fmt", "fmt(fmt)")
            .to_string();
        return Err(format!("printing is not a fixpoint:\n{diff}").into());
    }
    Ok(())
}

/// The python with jaxlib: `$NEURONC_PYTHON`, else `<repo>/.venv/bin/python` if present.
fn oracle_python(root: &Path) -> Option<PathBuf> {
    match std::env::var_os("NEURONC_PYTHON") {
        Some(p) => Some(PathBuf::from(p)),
        None => Some(root.join(".venv/bin/python")).filter(|p| p.exists()),
    }
}

fn jaxlib_accepts(root: &Path, python: &Path, files: &[PathBuf]) -> Result<(), Failed> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut outputs = Vec::new();
    let mut failures = Vec::new();
    for (i, path) in files.iter().enumerate() {
        match fmt_file(path) {
            Ok(text) => {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                let out = dir.path().join(format!("{i:03}_{stem}.mlir"));
                std::fs::write(&out, text).map_err(|e| e.to_string())?;
                outputs.push(out);
            }
            Err(e) => failures.push(format!("{}: fmt failed:\n{e}", path.display())),
        }
    }
    if !outputs.is_empty() {
        let result = Command::new(python)
            .arg(root.join("tools/mlir_check.py"))
            .arg("--quiet")
            .args(&outputs)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        if !result.status.success() {
            failures.push(format!(
                "jaxlib rejected fmt output:\n{}{}",
                String::from_utf8_lossy(&result.stdout),
                String::from_utf8_lossy(&result.stderr)
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = repo_root();
    let fixtures = root.join("fixtures");
    let mut trials = Vec::new();
    for path in neuronc::golden::discover(std::slice::from_ref(&fixtures)) {
        let name = trial_name(&fixtures, &path);
        trials.push(Trial::test(name, move || {
            neuronc::golden::run_file(&path).map_err(Failed::from)
        }));
    }
    let traces: Vec<PathBuf> = traces(&root)
        .into_iter()
        .filter(|p| !SKIPPED.contains(&trial_name(&fixtures, p).as_str()))
        .collect();
    let (rejected, traces): (Vec<PathBuf>, Vec<PathBuf>) = traces
        .into_iter()
        .partition(|p| REJECTED.iter().any(|(n, _)| *n == trial_name(&fixtures, p)));
    for path in rejected {
        let name = trial_name(&fixtures, &path);
        let word = REJECTED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, w)| *w);
        trials.push(Trial::test(
            format!("rejected/{name}"),
            move || match fmt_file(&path) {
                Ok(_) => Err(format!("{} loaded, but must be rejected", path.display()).into()),
                Err(e) if e.contains(word) && e.contains("error:") => Ok(()),
                Err(e) => Err(format!("rejected without saying {word:?}:\n{e}").into()),
            },
        ));
    }
    for path in &traces {
        let name = trial_name(&fixtures, path);
        let (r, p) = (root.clone(), path.clone());
        let snap = name.clone();
        trials.push(Trial::test(format!("snapshot/{name}"), move || {
            snapshot(&r, &snap, &p)
        }));
        let p = path.clone();
        trials.push(Trial::test(format!("roundtrip/{name}"), move || {
            roundtrip(&p)
        }));
        if std::fs::metadata(path).map_or(true, |m| m.len() > SMALL_TRACE_BYTES) {
            continue;
        }
        let (r, p, snap) = (root.clone(), path.clone(), format!("opt/{name}"));
        trials.push(Trial::test(format!("opt/{name}"), move || {
            snapshot_text(&r, &snap, &p, opt_o2(&p)?)
        }));
        let (r, p, snap) = (root.clone(), path.clone(), format!("nir/{name}"));
        trials.push(Trial::test(format!("nir/{name}"), move || {
            snapshot_text(&r, &snap, &p, program_nir(&p)?)
        }));
    }
    let python = oracle_python(&root);
    let ignored = python.is_none();
    let r = root.clone();
    trials.push(
        Trial::test("jaxlib_accepts_fmt", move || match &python {
            Some(py) => jaxlib_accepts(&r, py, &traces),
            None => Ok(()),
        })
        .with_ignored_flag(ignored),
    );
    libtest_mimic::run(&args, trials).exit();
}
