//! Shared helpers of the integration tests: run a `.mlir` file on the inputs of its
//! sibling `.npz` and compare with the `out_*` arrays (the framework's / XLA's outputs),
//! and run a small inline program on f32 inputs.

#![allow(dead_code)]

use neuronc_interp::{compare, npz, run_function, FloatSemantics, RunOptions, Tensor};
use std::path::{Path, PathBuf};

/// All `*.mlir` files under `dir` (recursively) that have a sibling `.npz`.
pub fn cases(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "mlir") && p.with_extension("npz").exists()
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs one case; `Ok(summary)` or `Err(reason)`. `tol(name)` gives (rtol, atol factor).
pub fn run_case(path: &Path, rtol: f64, atol_factor: f64, atol_min: f64) -> Result<String, String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let m = neuronc_ir::parse_module(&src).map_err(|e| format!("parse: {e}"))?;
    let f = m.entry().ok_or("no entry function")?;
    let name = f.name.clone();
    let arrays = npz::read_npz(&path.with_extension("npz")).map_err(|e| e.to_string())?;
    let types = neuronc_interp::arg_types(&m, &name).map_err(|e| e.to_string())?;
    let args = npz::load_args(&arrays, &types).map_err(|e| e.to_string())?;
    let t0 = std::time::Instant::now();
    // The references come from XLA (jax, torch_xla), so bf16 programs run with XLA's
    // excess precision, as `neuronc-rs run` does by default.
    let options = RunOptions {
        float_semantics: FloatSemantics::Xla,
        ..RunOptions::default()
    };
    let outs = run_function(&m, &name, args, &options).map_err(|e| e.to_string())?;
    let dt = t0.elapsed();
    let mut worst = 0.0f64;
    for (i, o) in outs.iter().enumerate() {
        let key = npz::out_key(i);
        let Some((_, a)) = arrays.iter().find(|(k, _)| *k == key) else {
            return Err(format!("{key} missing from the npz"));
        };
        let exp: Tensor = a.to_tensor(&key, Some(o.ty())).map_err(|e| e.to_string())?;
        let (rtol, atol_factor) =
            neuronc_interp::compare::narrow_tolerance(o.elem(), rtol, atol_factor);
        let atol = (atol_factor * neuronc_interp::compare::max_abs(&exp)).max(atol_min);
        compare(&exp, o, rtol, atol).map_err(|e| format!("{key}: {e}"))?;
        if let Err(e) = compare(&exp, o, 0.0, 0.0) {
            worst = worst.max(e.max_abs_err);
        }
    }
    Ok(format!(
        "{} outputs, max abs err {worst:e}, {:.1} ms",
        outs.len(),
        dt.as_secs_f64() * 1e3
    ))
}

/// Parses, verifies and runs `@main` of `src` (strict semantics); the f32 results.
pub fn run_f32(src: &str, inputs: Vec<Tensor>) -> Vec<Vec<f32>> {
    let m = neuronc_ir::parse_module(src).expect("test program parses");
    neuronc_ir::verify_module(&m).expect("test program verifies");
    run_function(&m, "main", inputs, &RunOptions::default())
        .expect("runs")
        .iter()
        .map(|t| t.as_f32().expect("f32 result").to_vec())
        .collect()
}

/// An f32 tensor of `shape` holding `v`.
pub fn f32s(shape: &[i64], v: &[f32]) -> Tensor {
    Tensor::from_f32(shape, v).expect("valid tensor")
}

/// Parses and verifies the inline program `src`, runs its `@main` on `inputs` under
/// `semantics`, and returns every result as f64 values.
pub fn run_with(src: &str, inputs: Vec<Tensor>, semantics: FloatSemantics) -> Vec<Vec<f64>> {
    let m = neuronc_ir::parse_module(src).expect("test program parses");
    neuronc_ir::verify_module(&m).expect("test program verifies");
    let opts = RunOptions {
        float_semantics: semantics,
        ..RunOptions::default()
    };
    run_function(&m, "main", inputs, &opts)
        .expect("test program runs")
        .iter()
        .map(Tensor::to_f64_vec)
        .collect()
}

/// Runs one case under `Xla` semantics; `Err` names the first output that differs in any
/// bit from the npz's `out_*` arrays (XLA:CPU's outputs).
pub fn run_exact(path: &Path) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let m = neuronc_ir::parse_module(&src).map_err(|e| e.to_string())?;
    let arrays = npz::read_npz(&path.with_extension("npz")).map_err(|e| e.to_string())?;
    let types = neuronc_interp::arg_types(&m, "main").map_err(|e| e.to_string())?;
    let args = npz::load_args(&arrays, &types).map_err(|e| e.to_string())?;
    let opts = RunOptions {
        float_semantics: FloatSemantics::Xla,
        ..RunOptions::default()
    };
    let got = run_function(&m, "main", args, &opts).map_err(|e| e.to_string())?;
    for (i, g) in got.iter().enumerate() {
        let key = npz::out_key(i);
        let (_, want) = arrays
            .iter()
            .find(|(k, _)| *k == key)
            .ok_or(format!("no {key}"))?;
        let want = want
            .to_tensor(&key, Some(g.ty()))
            .map_err(|e| e.to_string())?;
        compare(&want, g, 0.0, 0.0).map_err(|e| format!("{key}: {e}"))?;
    }
    Ok(())
}

/// Checks every case under `dir` (at least `min` of them) with [`run_exact`].
pub fn assert_all_exact(dir: &Path, min: usize) {
    let files = cases(dir);
    assert!(files.len() >= min, "cases missing: {files:?}");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| run_exact(p).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
