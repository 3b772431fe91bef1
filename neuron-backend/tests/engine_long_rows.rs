//! Free-axis reductions whose rows are too long to hold whole in SBUF (a softmax over a
//! 128,256-entry vocabulary: 513,024 B per row in FP32, more than a 192 KiB partition)
//! take their rows in pieces instead of failing with `SbufOverflow`, when nothing in the
//! kernel reads the whole row after the reduction (fusion keeps the softmax's reductions in kernels
//! of their own here: its `sbuf-capacity` rule refuses to keep such rows resident).

use neuronc_backend::engine::isa::{Instr, Opcode};
use neuronc_backend::engine::{compile_function, EngineOptions};
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

/// Plans and compiles `text`; returns the number of kernels and the free-axis reduction
/// records of the engine program.
fn free_reduces(text: &str) -> (usize, Vec<Instr>) {
    let m = parse_module(text).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    let out = compile_function(&m, &f, &plan, &EngineOptions::default()).expect("compile");
    let reduces = out
        .lowered
        .program
        .instrs
        .into_iter()
        .filter(|i| matches!(i.op, Opcode::ReduceFree { .. }))
        .collect();
    (plan.fusion.kernels.len(), reduces)
}

const LONG_SOFTMAX: &str = r#"
func.func @main(%x: tensor<8x128256xf32>) -> tensor<8x128256xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<8x128256xf32>, tensor<f32>) -> tensor<8xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<8xf32>) -> tensor<8x128256xf32>
  %s = stablehlo.subtract %x, %mb : tensor<8x128256xf32>
  %e = stablehlo.exponential %s : tensor<8x128256xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x128256xf32>, tensor<f32>) -> tensor<8xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<8xf32>) -> tensor<8x128256xf32>
  %r = stablehlo.divide %e, %sb : tensor<8x128256xf32>
  return %r : tensor<8x128256xf32>
}
"#;

#[test]
fn reductions_of_rows_longer_than_a_partition_take_them_in_pieces() {
    let (_, reduces) = free_reduces(LONG_SOFTMAX);
    // (The layout puts the vocabulary on the partitions for the max, a cross-partition
    // reduction; the sum reduces it along the free axis, the case here.)
    assert!(!reduces.is_empty(), "a free-axis reduction is lowered");
    for i in &reduces {
        // A piece of a row: at most the 8 KiB streaming tile (2,048 FP32 elements).
        assert!(i.free <= 2048, "reduce record over {} elements", i.free);
    }
    // The pieces still cover every element: 8 rows x 128,256.
    let read: u64 = reduces
        .iter()
        .map(|i| i.partitions as u64 * i.free as u64 * i.count as u64)
        .sum();
    assert!(read >= 8 * 128_256, "reduces read {read} elements");
}

/// A log-sum-exp over a 50,257-entry vocabulary (201,028 B per FP32 row): fusion keeps
/// `exp(x - max)` out of the sum's kernel (`sbuf-capacity`), which goes on to
/// `log(sum) + max`, ops that read only the reduced rows.
const LONG_LOGSUMEXP: &str = r#"
func.func @main(%x: tensor<4x50257xf32>, %m: tensor<4xf32>) -> tensor<4xf32> {
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x50257xf32>
  %s = stablehlo.subtract %x, %mb : tensor<4x50257xf32>
  %e = stablehlo.exponential %s : tensor<4x50257xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x50257xf32>, tensor<f32>) -> tensor<4xf32>
  %l = stablehlo.log %sum : tensor<4xf32>
  %r = stablehlo.add %l, %m : tensor<4xf32>
  return %r : tensor<4xf32>
}
"#;

#[test]
fn ops_on_the_reduced_rows_do_not_keep_long_rows_whole() {
    let (kernels, reduces) = free_reduces(LONG_LOGSUMEXP);
    // exp's kernel, and the sum's with the log and the add as its epilogue.
    assert_eq!(kernels, 2);
    assert!(!reduces.is_empty(), "a free-axis reduction is lowered");
    for i in &reduces {
        assert!(
            i.free < 50_257,
            "reduce record over a whole row ({} elements)",
            i.free
        );
    }
}

/// jax's `log_softmax` over 20,000 entries (80,000 B per FP32 row). The sum's kernel may
/// not also take `shifted - log(sum)`: that kernel would hold two row-sized inputs (the
/// exponentials and the shifted logits) and its output, 240,000 B per partition; fusion's
/// `sbuf-capacity` rule counts the kernel's row-sized inputs too, so it refuses.
const LOG_SOFTMAX_20K: &str = r#"
func.func @main(%x: tensor<4x20000xf32>) -> tensor<4x20000xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %mx = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x20000xf32>, tensor<f32>) -> tensor<4xf32>
  %mb = stablehlo.broadcast_in_dim %mx, dims = [0] : (tensor<4xf32>) -> tensor<4x20000xf32>
  %s = stablehlo.subtract %x, %mb : tensor<4x20000xf32>
  %e = stablehlo.exponential %s : tensor<4x20000xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x20000xf32>, tensor<f32>) -> tensor<4xf32>
  %l = stablehlo.log %sum : tensor<4xf32>
  %lb = stablehlo.broadcast_in_dim %l, dims = [0] : (tensor<4xf32>) -> tensor<4x20000xf32>
  %r = stablehlo.subtract %s, %lb : tensor<4x20000xf32>
  return %r : tensor<4x20000xf32>
}
"#;

#[test]
fn row_sized_inputs_count_against_sbuf() {
    let m = parse_module(LOG_SOFTMAX_20K).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    let refused = plan
        .fusion
        .rejections
        .iter()
        .any(|r| r.rule.name() == "sbuf-capacity");
    assert!(refused, "no sbuf-capacity refusal");
    let out = compile_function(&m, &f, &plan, &EngineOptions::default());
    assert!(out.is_ok(), "{:?}", out.err());
}
