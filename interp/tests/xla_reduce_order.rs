//! f16/bf16 `reduce`s under `FloatSemantics::Xla` give XLA:CPU's results bit for bit.
//!
//! Each `tests/xla_reduce_order/NAME.mlir` is one reduce (sum or product, f16 or bf16,
//! over several dimension sets; two cases reduce a product `x*y` that XLA fuses into the
//! reduce); its `.npz` holds the inputs (`arg_*`, random with wide magnitudes so that the
//! summation order matters) and `out_000` as printed by XLA:CPU (jaxlib 0.10.2 through
//! `tools/xla_run.py`, x86-64 host). Before the vectorized-lane order of
//! `neuronc_interp`'s `reduce/xla_lanes.rs` the interpreter (sequential order) differed
//! from these outputs on 11 of the 15 f16 files; the four that agreed are the ones XLA:CPU
//! also sums sequentially: 6x6x8 and 3x5x2x7 (6- and 5-trip loops are not vectorized),
//! 40x6x8 (a padded tree-rewriter window) and the `x*y` 2x3x2x5 (a two-array body at 2
//! trips; the 2-lane order would differ on 1 of its 3 outputs). bf16 reduces stay
//! sequential and agreed before and after.

use neuronc_interp::{arg_types, compare, npz, run_function, FloatSemantics, RunOptions};
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_reduce_order");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("case directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    files
}

/// Runs one case under `Xla` semantics; `Err` names the first output element that differs
/// from XLA:CPU's.
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
    let key = npz::out_key(0);
    let (_, want) = arrays.iter().find(|(k, _)| *k == key).ok_or("no out_000")?;
    let want = want
        .to_tensor(&key, Some(got[0].ty()))
        .map_err(|e| e.to_string())?;
    compare(&want, &got[0], 0.0, 0.0).map_err(|e| e.to_string())
}

#[test]
fn f16_and_bf16_reduces_match_xla_cpu_bit_for_bit() {
    let files = cases();
    assert!(files.len() >= 17, "cases missing: {files:?}");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|p| check(p).err().map(|e| format!("{}: {e}", p.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
