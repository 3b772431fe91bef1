//! Runs every `fixtures/**/*.mlir` that has a sibling `.npz` and compares each `out_*`
//! with the framework's output: rtol 1e-4, atol 1e-5 × max|ref| (1e-3 for both on
//! `*train*` / `*grad*` fixtures, which reorder many f32 reductions).
//! One test per fixture (libtest-mimic); set `FIXTURE_REPORT=1` to print each summary.

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let trials = common::cases(&root)
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
            let loose = name.contains("train") || name.contains("grad");
            let (rtol, atol) = if loose { (1e-3, 1e-3) } else { (1e-4, 1e-5) };
            Trial::test(name.clone(), move || {
                let s = common::run_case(&p, rtol, atol, 0.0).map_err(Failed::from)?;
                if std::env::var_os("FIXTURE_REPORT").is_some() {
                    println!("{name}: {s}");
                }
                Ok(())
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
