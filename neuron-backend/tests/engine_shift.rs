//! A shift along the free axis of a matmul's result (`engine::shift`): the recomputed
//! attention's `scale * (K·Qᵀ) + mask - bcast(max)` is applied by the matmul as three more
//! contraction rows (BF16 hi + mid + lo parts of the shift under auto-cast), so the PSUM
//! eviction applies `exp(x*scale + mask)` and no two-tensor op remains. Not folded when
//! the contraction fills its K tiles (a whole extra pass) or when the shift depends on the
//! matmul's result.

use neuronc_backend::engine::isa::Opcode;
use neuronc_backend::engine::{compile_function, EngineOptions, EngineOutput};
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

/// Scores of 2 batches, `d` features, 256 keys x 256 queries; `max` over the queries'
/// dimension (2) and `mask` over the keys' (1): one of them varies along the free axis
/// of the result, whichever dimension the layout puts on the partitions.
fn program(d: usize) -> String {
    format!(
        r#"func.func @main(%k: tensor<2x256x{d}xf32>, %q: tensor<2x{d}x256xf32>, %scale: tensor<f32>, %mask: tensor<2x256xf32>, %max: tensor<2x256xf32>) -> tensor<2x256x256xf32> {{
  %s = stablehlo.dot_general %k, %q, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x256x{d}xf32>, tensor<2x{d}x256xf32>) -> tensor<2x256x256xf32>
  %sc = stablehlo.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<2x256x256xf32>
  %a = stablehlo.multiply %s, %sc : tensor<2x256x256xf32>
  %m = stablehlo.broadcast_in_dim %mask, dims = [0, 1] : (tensor<2x256xf32>) -> tensor<2x256x256xf32>
  %b = stablehlo.add %a, %m : tensor<2x256x256xf32>
  %mx = stablehlo.broadcast_in_dim %max, dims = [0, 2] : (tensor<2x256xf32>) -> tensor<2x256x256xf32>
  %c = stablehlo.subtract %b, %mx : tensor<2x256x256xf32>
  %e = stablehlo.exponential %c : tensor<2x256x256xf32>
  return %e : tensor<2x256x256xf32>
}}"#
    )
}

fn compile(src: &str) -> EngineOutput {
    let m = parse_module(src).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    compile_function(&m, &f, &plan, &EngineOptions::default()).expect("compile")
}

/// (MultiplyMoving partitions, exp applied by the eviction, two-tensor ops).
fn shape_of(out: &EngineOutput) -> (Vec<u32>, bool, usize) {
    let instrs = &out.lowered.program.instrs;
    let rows = instrs
        .iter()
        .filter(|i| i.op == Opcode::MultiplyMoving)
        .map(|i| i.partitions)
        .collect();
    let exp_evict = instrs.iter().any(|i| {
        matches!(&i.op, Opcode::Activation { func, evict: true } if func.starts_with("exponential"))
    });
    let two_tensor = instrs
        .iter()
        .filter(|i| matches!(&i.op, Opcode::Elementwise { inputs: 2, .. }))
        .count();
    (rows, exp_evict, two_tensor)
}

#[test]
fn the_shift_rides_on_three_more_contraction_rows() {
    let (rows, exp_evict, two_tensor) = shape_of(&compile(&program(64)));
    assert!(
        !rows.is_empty() && rows.iter().all(|&r| r == 67),
        "{rows:?}"
    );
    assert!(exp_evict, "the eviction applies exp(x*s+b)");
    assert_eq!(two_tensor, 0);
}

#[test]
fn a_full_k_tile_keeps_the_shift_a_vector_op() {
    let (rows, exp_evict, two_tensor) = shape_of(&compile(&program(128)));
    assert!(rows.iter().all(|&r| r == 128), "{rows:?}");
    assert!(!exp_evict);
    assert!(two_tensor > 0);
}

#[test]
fn a_shift_derived_from_the_scores_is_not_folded() {
    // The maximum taken over the scores themselves: the matmul cannot consume a shift that
    // needs its own result.
    let src = program(64).replace(
        "%mx = stablehlo.broadcast_in_dim %max",
        "%z = stablehlo.constant dense<0xFF800000> : tensor<f32>\n  %r = stablehlo.reduce(%a init: %z) applies stablehlo.maximum across dimensions = [1] : (tensor<2x256x256xf32>, tensor<f32>) -> tensor<2x256xf32>\n  %mx = stablehlo.broadcast_in_dim %r",
    );
    let (rows, _, _) = shape_of(&compile(&src));
    assert!(rows.iter().all(|&r| r == 64), "{rows:?}");
}
