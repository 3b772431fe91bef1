//! `check_run run FILE`: parses, verifies and runs the entry function of a self-checking
//! StableHLO file (no arguments) with the interpreter, printing errors the way
//! `neuronc-rs run` does (`FILE:L:C: error: ...` for parse/verify failures,
//! `neuronc-rs: error: interpreter: ...` for run failures) and exiting 1 on failure.
//! A lightweight stand-in for `neuronc-rs run` that only builds `ir` and `interp`
//! (`tools/stablehlo_testdata.py --bin target/release/examples/check_run`).

use neuronc_interp::{run_function, RunOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args
        .get(2)
        .filter(|_| args.get(1).map(String::as_str) == Some("run"))
    else {
        eprintln!("usage: check_run run FILE.mlir");
        return ExitCode::from(2);
    };
    match run(path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::from(1)
        }
    }
}

fn run(path: &str) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let module = neuronc_ir::parse_module(&src).map_err(|e| format!("{path}:1:1: error: {e}"))?;
    neuronc_ir::verify_module(&module).map_err(|e| format!("{path}:1:1: error: {e}"))?;
    let func = module
        .entry()
        .map(|f| f.name.clone())
        .ok_or_else(|| format!("{path}:1:1: error: no entry function"))?;
    run_function(&module, &func, Vec::new(), &RunOptions::default())
        .map(|_| ())
        .map_err(|e| format!("neuronc-rs: error: interpreter: {e}"))
}
