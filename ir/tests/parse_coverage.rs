//! The hand-written corpus (`tests/corpus/*.mlir`) exercises every op kind the IR has,
//! in pretty syntax wherever the op has one; the only kinds missing are the quantization
//! ops, whose operands/results need quantized element types (unsupported by design), and
//! `set_dimension_size`, which the parser lowers away (a parsed module never holds one;
//! `tests/bounded_dynamism.rs` reads it in both syntaxes).

mod common;

use neuronc_ir::{parse_module, OpKind};
use std::collections::BTreeSet;

const NOT_IN_CORPUS: &[OpKind] = &[
    OpKind::UniformQuantize,
    OpKind::UniformDequantize,
    OpKind::SetDimensionSize,
];

#[test]
fn corpus_covers_every_op_kind() {
    let mut seen = BTreeSet::new();
    for c in common::chunks()
        .iter()
        .filter(|c| c.file.starts_with("ops_"))
    {
        let m = parse_module(&c.text).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        m.walk_ops(|op| {
            seen.insert(m.op(op).kind);
        });
    }
    let missing: Vec<&str> = OpKind::ALL
        .iter()
        .filter(|k| !seen.contains(k) && !NOT_IN_CORPUS.contains(k))
        .map(|k| k.name())
        .collect();
    assert!(
        missing.is_empty(),
        "op kinds without a corpus example: {missing:?}"
    );
}

#[test]
fn corpus_uses_pretty_syntax_where_it_exists() {
    // Every op that has a custom syntax appears at least once written in it.
    let mut pretty = BTreeSet::new();
    for c in common::chunks()
        .iter()
        .filter(|c| c.file.starts_with("ops_"))
    {
        for line in c.text.lines() {
            let t = line.trim_start();
            let after_eq = if t.starts_with('%') {
                t.split_once(" = ").map(|x| x.1).unwrap_or(t)
            } else {
                t
            };
            let word = after_eq.split([' ', '(']).next().unwrap_or("");
            if let Some(k) = OpKind::from_name(word) {
                pretty.insert(k);
            }
        }
    }
    // Ops written only in generic form in the corpus: exactly those without custom syntax.
    let generic_only: Vec<&str> = OpKind::ALL
        .iter()
        .filter(|k| !pretty.contains(k) && !NOT_IN_CORPUS.contains(k))
        .map(|k| k.name())
        .collect();
    let expected = [
        "stablehlo.gather",
        "stablehlo.scatter",
        "stablehlo.torch_index_select",
        "stablehlo.triangular_solve",
        "stablehlo.reduce_window",
        "stablehlo.select_and_scatter",
        "stablehlo.sort",
        "stablehlo.map",
        "stablehlo.batch_norm_inference",
        "stablehlo.batch_norm_training",
        "stablehlo.batch_norm_grad",
        "stablehlo.if",
        "stablehlo.case",
        "stablehlo.infeed",
        "stablehlo.outfeed",
        "stablehlo.send",
        "stablehlo.recv",
        "stablehlo.all_gather",
        "stablehlo.all_reduce",
        "stablehlo.reduce_scatter",
        "stablehlo.all_to_all",
        "stablehlo.collective_permute",
        "stablehlo.collective_broadcast",
        "stablehlo.collective_reduce",
        "stablehlo.async_start",
        "stablehlo.async_done",
        "stablehlo.cross-replica-sum",
        "stablehlo.dynamic_conv",
        "stablehlo.dynamic_gather",
        "chlo.constant_like",
    ];
    let mut want: Vec<&str> = expected.to_vec();
    want.sort();
    let mut got = generic_only.clone();
    got.sort();
    assert_eq!(got, want);
}
