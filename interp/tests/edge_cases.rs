//! Per-op edge cases whose expected outputs XLA:CPU computed (through jax): every
//! `interp/tests/edge/*.mlir` with its `.npz` (made by `gen_edge_cases.py`) must match
//! exactly for integer/bool results and within 2 ulp-ish (rtol 1e-6) for floats;
//! transcendental cases (`*_tx`) use rtol 1e-5.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edge");
    let trials = common::cases(&root)
        .into_iter()
        .map(|p| {
            let name = p.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            let rtol = if name.ends_with("_tx") { 1e-5 } else { 1e-6 };
            Trial::test(name, move || {
                common::run_case(&p, rtol, 0.0, 1e-30).map(|_| ()).map_err(Failed::from)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
