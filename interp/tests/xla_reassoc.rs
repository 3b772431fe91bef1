//! XLA:CPU's result-changing algebraic rewrites and kept reduce loops under
//! `FloatSemantics::Xla`, bit for bit against XLA:CPU.
//!
//! Each `tests/xla_reassoc/NAME.mlir` has its inputs (`arg_*`) and XLA:CPU's results
//! (`out_*`, jaxlib 0.10.2 through `tools/xla_run.py`, x86-64 host) in `NAME.npz`, written
//! by `tests/gen_xla_reassoc.py`:
//! * `f16_const_chains`, `f32_const_chains`: `(x - c) + c`, `c2 + (x + c1)`, broadcast
//!   constants, `(c1 - x) + c2`, `(x - c1) - c2`, `c2 * (x * c1)`, non-splat pairs, a
//!   chain of three, and the mixed splat / non-splat pair XLA leaves alone
//!   (`neuronc_interp`'s `xla_reassoc.rs`);
//! * `f16_root_divides`: `a / sqrt(x)`, `a / rsqrt(x)`, `1 / rsqrt(a)` with single-use
//!   roots, and a `sqrt` with two uses (not rewritten);
//! * `f16_layer_norm_grad`: torch_xla's f16 `LayerNorm` backward, whose
//!   `batch_norm_grad` adds `eps` back to the recomputed `(1 / rsqrt(var + eps))² - eps`
//!   (XLA folds the two `eps` away after expanding the batch norm);
//! * `f16_sum_T_kK_sS`: f16 sums over one dimension of `T` of a chain of `K` ops on `S`
//!   inputs, on both sides of LLVM's full-unroll budget (`xla_unroll.rs`).
//!
//! Mutation check (done by hand): without the re-association rewrite the const-chain,
//! root-divide and layer-norm cases fail; without the kept-loop rule the `k7_s1`,
//! `k5_s2`, `k4_s3`, `16_k16` and `24_k10` sums fail.

use neuronc_interp::{arg_types, compare, npz, run_function, FloatSemantics, RunOptions};
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_reassoc");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("case directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    files
}

/// Runs one case under `Xla` semantics; `Err` names the first output that differs from
/// XLA:CPU's.
fn check(path: &Path) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let m = neuronc_ir::parse_module(&src).map_err(|e| e.to_string())?;
    let arrays = npz::read_npz(&path.with_extension("npz")).map_err(|e| e.to_string())?;
    let types = arg_types(&m, "main").map_err(|e| e.to_string())?;
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

#[test]
fn xla_rewrites_and_kept_loops_match_xla_cpu_bit_for_bit() {
    let files = cases();
    assert!(files.len() >= 11, "cases missing: {files:?}");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| check(p).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
