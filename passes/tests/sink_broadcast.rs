//! Broadcast sinking keeps the values: every case of
//! `fixtures/passes/canonicalize/sink_broadcast.mlir` computes bit-identical outputs before
//! and after `canonicalize` on random inputs (the moved elementwise ops compute the same
//! elements from the same operands), and the cases the fixture expects to be rewritten are.

mod common;

use common::{rewrite_case, run_entry as run};
use neuronc_interp::{arg_types, Tensor};
use neuronc_ir::parse::split_input;
use neuronc_ir::{ElemType, Module};
use std::path::Path;

/// Floats in [-1, 1), integers and booleans 0 or 1, from a xorshift generator.
fn random_inputs(m: &Module, seed: u64) -> Vec<Tensor> {
    let mut s = seed | 1;
    let name = m.entry().expect("entry").name.clone();
    arg_types(m, &name)
        .expect("argument types")
        .iter()
        .map(|t| {
            let float = matches!(
                t.elem,
                ElemType::F32 | ElemType::F64 | ElemType::BF16 | ElemType::F16
            );
            let v: Vec<f64> = (0..t.num_elements())
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    if float {
                        (s % 2000) as f64 / 1000.0 - 1.0
                    } else {
                        (s % 2) as f64
                    }
                })
                .collect();
            match t.elem {
                ElemType::I1 => {
                    let b: Vec<bool> = v.iter().map(|&x| x != 0.0).collect();
                    Tensor::from_bool(&t.shape, &b)
                }
                _ if float => Tensor::from_f64_as(t.elem, &t.shape, &v),
                e => Tensor::from_i64(
                    e,
                    &t.shape,
                    &v.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                ),
            }
            .expect("input tensor")
        })
        .collect()
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
