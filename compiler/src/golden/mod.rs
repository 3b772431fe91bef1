//! The golden-file test runner behind `neuronc-rs test` and `cargo test --test golden`.
//!
//! A golden file is any `.mlir` file with a `// RUN:` line (format in README.md):
//! * `// RUN: [not] neuronc-rs ARGS... [2>&1]` — `%s` is the file; the invocation runs
//!   in-process through [`crate::cli::run`] with the file's directory as base directory,
//!   so diagnostics name the file by its bare name whatever the current directory. `not`
//!   expects a non-zero exit; `2>&1` appends stderr to the checked output.
//! * `// CHECK:`-family directives on the output ([`check`]);
//! * `// expected-error...` directives ([`expect`]): the run then succeeds iff the
//!   reported diagnostics match exactly, whatever the exit code;
//! * `<stem>.expected` next to the file: the output must equal it byte for byte;
//!   `NEURONC_BLESS=1` rewrites it (and creates it for files without other directives).
//!
//! Invariant: a test with a RUN line always checks something — at least the exit code.

pub mod check;
pub mod expect;

use std::path::{Path, PathBuf};

use crate::cli::{self, Io};
use check::{Check, CheckKind};
use expect::Expected;

/// Environment variable that makes the runner rewrite `.expected` files.
pub const BLESS_ENV: &str = "NEURONC_BLESS";

/// One `// RUN:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLine {
    pub line: usize,
    /// `not` prefix: the command must fail.
    pub negate: bool,
    /// Arguments after `neuronc-rs`, with `%s` still in place.
    pub args: Vec<String>,
    /// `2>&1`: check stderr too (appended after stdout).
    pub merge_stderr: bool,
}

/// The directives of a golden file.
#[derive(Clone, Debug, Default)]
pub struct TestFile {
    pub runs: Vec<RunLine>,
    pub checks: Vec<Check>,
    pub expected: Vec<Expected>,
}

impl TestFile {
    /// Extracts the directives from the `//` comments of `text`.
    pub fn parse(text: &str) -> Result<TestFile, String> {
        let mut file = TestFile::default();
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find("//") else { continue };
            let comment = &line[at + 2..];
            if let Some(cmd) = comment.trim_start().strip_prefix("RUN:") {
                file.runs.push(parse_run(cmd, i + 1)?);
            } else if let Some((kind, pattern)) = CheckKind::parse(comment) {
                file.checks.push(Check {
                    line: i + 1,
                    kind,
                    pattern: pattern.to_string(),
                });
            } else if let Some(e) = expect::parse(comment, i + 1)? {
                file.expected.push(e);
            }
        }
        Ok(file)
    }
}

fn parse_run(cmd: &str, line: usize) -> Result<RunLine, String> {
    let mut words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
    let negate = words.first().is_some_and(|w| w == "not");
    if negate {
        words.remove(0);
    }
    if words.first().map(String::as_str) != Some("neuronc-rs") {
        return Err(format!("line {line}: RUN line must invoke neuronc-rs"));
    }
    words.remove(0);
    let merge_stderr = words.last().is_some_and(|w| w == "2>&1");
    if merge_stderr {
        words.pop();
    }
    Ok(RunLine {
        line,
        negate,
        args: words,
        merge_stderr,
    })
}

/// Does `path` look like a golden file (an `.mlir` file with a `// RUN:` line)?
pub fn is_golden(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "mlir")
        && std::fs::read_to_string(path).is_ok_and(|t| t.contains("// RUN:"))
}

/// All golden files under `paths` (directories are searched recursively), sorted.
/// Explicitly named files are included even without a RUN line (they then fail).
pub fn discover(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut found);
        } else {
            found.push(p.clone());
        }
    }
    found.sort();
    found.dedup();
    found
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, found);
        } else if is_golden(&path) {
            found.push(path);
        }
    }
}

/// Runs one golden file; `Err` explains every failure.
pub fn run_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let file = TestFile::parse(&text)?;
    if file.runs.is_empty() {
        return Err("no `// RUN:` line".into());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = path.parent().map(Path::to_path_buf);
    let mut all_output = String::new();
    for run in &file.runs {
        all_output.push_str(&run_one(run, &file, &name, base.clone())?);
    }
    check_expected_file(path, &file, &all_output)
}

/// Runs one RUN line and checks its exit code, diagnostics and CHECK lines; returns the
/// checked output.
fn run_one(
    run: &RunLine,
    file: &TestFile,
    name: &str,
    base: Option<PathBuf>,
) -> Result<String, String> {
    let args = std::iter::once("neuronc-rs".to_string())
        .chain(run.args.iter().map(|a| a.replace("%s", name)));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let outcome = cli::run(
        args,
        Io {
            stdin: &mut std::io::empty(),
            out: &mut out,
            err: &mut err,
            base_dir: base,
            color: false,
        },
    );
    let stderr = String::from_utf8_lossy(&err).into_owned();
    let mut output = String::from_utf8_lossy(&out).into_owned();
    if run.merge_stderr {
        output.push_str(&stderr);
    }
    let context = |msg: String| format!("RUN line {}: {msg}", run.line);
    if !file.expected.is_empty() {
        expect::check_diagnostics(&file.expected, &outcome.reported).map_err(context)?;
    } else if run.negate && outcome.code == 0 {
        return Err(context("expected a non-zero exit code, got 0".into()));
    } else if !run.negate && outcome.code != 0 {
        return Err(context(format!(
            "exit code {}; stderr:\n{stderr}",
            outcome.code
        )));
    }
    check::check_output(&file.checks, &output).map_err(context)?;
    Ok(output)
}

/// Compares (or, when blessing, writes) `<stem>.expected`.
fn check_expected_file(path: &Path, file: &TestFile, output: &str) -> Result<(), String> {
    let expected_path = path.with_extension("expected");
    let bless = std::env::var_os(BLESS_ENV).is_some_and(|v| v == "1");
    let exists = expected_path.exists();
    if bless {
        let wanted =
            exists || (file.checks.is_empty() && file.expected.is_empty() && !output.is_empty());
        if wanted {
            std::fs::write(&expected_path, output)
                .map_err(|e| format!("cannot write {}: {e}", expected_path.display()))?;
        }
        return Ok(());
    }
    if !exists {
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expected_path)
        .map_err(|e| format!("cannot read {}: {e}", expected_path.display()))?;
    if expected == output {
        return Ok(());
    }
    let diff = similar::TextDiff::from_lines(expected.as_str(), output)
        .unified_diff()
        .header("expected", "actual")
        .to_string();
    Err(format!(
        "output differs from {} (re-bless with {BLESS_ENV}=1):\n{diff}",
        expected_path.display()
    ))
}
