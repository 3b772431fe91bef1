//! Runs every `fixtures/passes/**/*.mlir`: takes the pipeline from the file's
//! `// RUN: neuronc-rs opt --passes=... [--opt-fuel=N] %s` (or `-O<n>`) line, runs it on each `// -----`
//! chunk with `verify_each`, prints the results joined by `// -----` and checks the
//! file's CHECK directives against that text (the same subset the golden runner uses:
//! literal CHECK, CHECK-LABEL, CHECK-NEXT, CHECK-SAME, CHECK-NOT). Independent of the CLI.

mod common;

use neuronc_ir::{parse::split_input, parse_module, print_module, verify_module, PrintOptions};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/passes")
}

fn mlir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            mlir_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") {
            out.push(p);
        }
    }
}

/// The RUN line's arguments.
fn run_args(text: &str) -> Result<std::str::SplitWhitespace<'_>, String> {
    let run = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("// RUN:"))
        .ok_or("no RUN line")?;
    Ok(run.split_whitespace())
}

/// The `--opt-fuel=N` of the RUN line, if any.
fn fuel_of(text: &str) -> Result<Option<u64>, String> {
    for arg in run_args(text)? {
        if let Some(n) = arg.strip_prefix("--opt-fuel=") {
            return n.parse().map(Some).map_err(|_| format!("bad {arg}"));
        }
    }
    Ok(None)
}

/// The pipeline named by the RUN line.
fn pipeline_of(text: &str) -> Result<Pipeline, String> {
    for arg in run_args(text)? {
        if let Some(p) = arg.strip_prefix("--passes=") {
            return Pipeline::parse(p).map_err(|e| e.to_string());
        }
        if let Some(level) = arg.strip_prefix("-O") {
            let level: u8 = level.parse().map_err(|_| format!("bad {arg}"))?;
            return Pipeline::preset(level).map_err(|e| e.to_string());
        }
    }
    Err("RUN line names no pipeline".into())
}

fn run_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let pipeline = pipeline_of(&text)?;
    let fuel = fuel_of(&text)?;
    let mut outputs = Vec::new();
    for (offset, chunk) in split_input(&text) {
        let mut m = parse_module(chunk).map_err(|e| format!("chunk at byte {offset}: {e}"))?;
        verify_module(&m).map_err(|e| format!("chunk at byte {offset} does not verify: {e}"))?;
        let mut ctx = PassContext::new();
        if let Some(f) = fuel {
            ctx = ctx.with_fuel(f);
        }
        ctx.verify_each = true;
        run_pipeline(&mut m, &pipeline, &mut ctx)
            .map_err(|e| format!("chunk at byte {offset}: {e}"))?;
        let printed = print_module(&m, &PrintOptions::default());
        parse_module(&printed).map_err(|e| format!("output does not re-parse: {e}\n{printed}"))?;
        outputs.push(printed);
    }
    let output = outputs.join("// -----\n");
    if std::env::var_os("NEURONC_DUMP").is_some() {
        println!("=== {} ===\n{output}", path.display());
    }
    common::check::run_checks(&text, &output).map_err(|e| format!("{e}\n--- output ---\n{output}"))
}

#[test]
fn pass_fixtures() {
    let mut files = Vec::new();
    mlir_files(&fixture_dir(), &mut files);
    assert!(
        !files.is_empty(),
        "no fixtures under {}",
        fixture_dir().display()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| run_file(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    println!("{} fixture files", files.len());
    assert!(
        failures.is_empty(),
        "{} of {} fixture files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
