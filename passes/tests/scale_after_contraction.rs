//! `scale-after-contraction` keeps the values: every case of
//! `fixtures/passes/scale-after-contraction/*.mlir` computes the same outputs (within
//! f32 rounding of a moved division) before and after the pass, on random positive
//! inputs, and the cases the fixture expects to be rewritten are.

mod common;

use common::{rewrite_case, run_entry as run};
use neuronc_interp::Tensor;
use neuronc_ir::parse::split_input;
use neuronc_ir::Module;
use std::path::Path;

/// Values in [0.5, 1.5) (divisors away from zero).
fn random_inputs(m: &Module, seed: u64) -> Vec<Tensor> {
    common::random_inputs(m, seed, |_, s| 0.5 + (s % 1000) as f64 / 1000.0)
}

#[test]
fn fixture_cases_keep_their_values() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/passes/scale-after-contraction/cases.mlir");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let mut rewritten = Vec::new();
    for (offset, chunk) in split_input(&text) {
        let (m, after, trace) = rewrite_case(chunk, "scale-after-contraction");
        if !trace.is_empty() {
            rewritten.push(m.entry().expect("entry").name.clone());
        }
        for seed in [3, 77, 4242] {
            let inputs = random_inputs(&m, seed);
            let (want, got) = (run(&m, &inputs), run(&after, &inputs));
            for (w, g) in want.iter().zip(&got) {
                for (i, (a, b)) in w.iter().zip(g).enumerate() {
                    let tol = 1e-5 * a.abs().max(1.0);
                    assert!(
                        (a - b).abs() <= tol,
                        "@{offset} seed {seed} [{i}]: {a} vs {b}"
                    );
                }
            }
        }
    }
    assert_eq!(rewritten, ["main", "rhs"]);
}
