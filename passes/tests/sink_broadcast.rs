//! Broadcast sinking keeps the values: every case of
//! `fixtures/passes/canonicalize/sink_broadcast.mlir` computes bit-identical outputs before
//! and after `canonicalize` on random inputs (the moved elementwise ops compute the same
//! elements from the same operands), and the cases the fixture expects to be rewritten are.

mod common;

use common::{rewrite_case, run_entry as run};
use neuronc_interp::Tensor;
use neuronc_ir::parse::split_input;
use neuronc_ir::Module;
use std::path::Path;

/// Floats in [-1, 1), integers and booleans 0 or 1.
fn random_inputs(m: &Module, seed: u64) -> Vec<Tensor> {
    common::random_inputs(m, seed, |e, s| {
        if e.is_float() {
            (s % 2000) as f64 / 1000.0 - 1.0
        } else {
            (s % 2) as f64
        }
    })
}

#[test]
fn fixture_cases_keep_their_values() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/passes/canonicalize/sink_broadcast.mlir");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let mut rewritten = Vec::new();
    for (offset, chunk) in split_input(&text) {
        let (m, after, trace) = rewrite_case(chunk, "canonicalize,dce");
        let trace = trace.join("\n");
        if trace.contains("elementwise-of-broadcasts") || trace.contains("reshape-of-broadcast") {
            rewritten.push(m.entry().expect("entry").name.clone());
        }
        for seed in [3, 77, 4242] {
            let inputs = random_inputs(&m, seed);
            let (want, got) = (run(&m, &inputs), run(&after, &inputs));
            assert_eq!(want.len(), got.len());
            for (w, g) in want.iter().zip(&got) {
                assert_eq!(w.len(), g.len(), "@{offset}");
                for (i, (a, b)) in w.iter().zip(g).enumerate() {
                    assert!(
                        a.to_bits() == b.to_bits(),
                        "@{offset} seed {seed} [{i}]: {a} vs {b}"
                    );
                }
            }
        }
    }
    assert_eq!(rewritten, ["attention_mask", "both_broadcast"]);
}
