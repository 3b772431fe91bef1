//! Per-op edge cases whose expected outputs XLA:CPU computed (through jax): every
//! `interp/tests/edge/*.mlir` with its `.npz` (made by `gen_edge_cases.py`) must match
//! exactly for integer/bool results and within rtol 1e-6 for floats; approximate cases
//! (`*_approx`: transcendentals, reassociated sums) use rtol 1e-5, atol 1e-6 x max|ref|.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edge");
    let trials = common::cases(&root)
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let (rtol, atol) = if name.ends_with("_approx") {
                (1e-5, 1e-6)
            } else {
                (1e-6, 0.0)
            };
            Trial::test(name, move || {
                common::run_case(&p, rtol, atol, 0.0)
                    .map(|_| ())
                    .map_err(Failed::from)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
