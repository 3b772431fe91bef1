//! Record-invariant work (`engine::hoist`): a value every record of a kernel reads whole
//! (a mask broadcast over the heads the records walk) is computed, and relaid, once per
//! kernel; a value each record reads only a slice of stays per record. Expected counts
//! follow by hand from the shapes and the hardware limits (`neuron-facts.md` §1.3: 128
//! partitions; §1.4: a transpose is one 128 × 128 TensorE pass per block).

use neuronc_backend::engine::isa::{Instr, Opcode, Program};
use neuronc_backend::engine::{compile_function, EngineOptions, EngineOutput};
use neuronc_ir::{parse_module, Module};
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function, NeuronPlan};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

fn compile(m: &Module) -> (NeuronPlan, EngineOutput) {
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(m, &f, &FusionConfig::default());
    let out = compile_function(m, &f, &plan, &EngineOptions::default()).expect("compile");
    (plan, out)
}

/// The records of `p` whose mnemonic is `name`.
fn named<'a>(p: &'a Program, name: &str) -> Vec<&'a Instr> {
    p.instrs
        .iter()
        .filter(|i| i.op.mnemonic() == name)
        .collect()
}

/// Hardware instructions of the records of `p` that satisfy `pred`.
fn count(p: &Program, pred: impl Fn(&Opcode) -> bool) -> u64 {
    p.instrs
        .iter()
        .filter(|i| pred(&i.op))
        .map(|i| i.count as u64)
        .sum()
}

/// Four heads of scores `S = Q·K` (4 × 128 × 128: one 128 × 128 output block per head,
/// so the kernel's records walk the heads), plus `mask` squared and broadcast over the
/// heads (`dims = [1, 2]`: every head reads all of it), plus a per-head-and-row vector
/// exponentiated and broadcast along the last dimension (each head reads its own row of
/// it).
const HEADS: &str = r#"
func.func @main(%q: tensor<4x128x64xf32>, %k: tensor<4x64x128xf32>, %mask: tensor<128x128xf32>, %v: tensor<4x128xf32>) -> tensor<4x128x128xf32> {
  %s = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x128x64xf32>, tensor<4x64x128xf32>) -> tensor<4x128x128xf32>
  %m2 = stablehlo.multiply %mask, %mask : tensor<128x128xf32>
  %mb = stablehlo.broadcast_in_dim %m2, dims = [1, 2] : (tensor<128x128xf32>) -> tensor<4x128x128xf32>
  %a = stablehlo.add %s, %mb : tensor<4x128x128xf32>
  %e = stablehlo.exponential %v : tensor<4x128xf32>
  %eb = stablehlo.broadcast_in_dim %e, dims = [0, 1] : (tensor<4x128xf32>) -> tensor<4x128x128xf32>
  %r = stablehlo.add %a, %eb : tensor<4x128x128xf32>
  return %r : tensor<4x128x128xf32>
}
"#;

#[test]
fn a_mask_every_head_reads_is_computed_once_and_a_per_head_vector_per_record() {
    let m = parse_module(HEADS).expect("parse");
    let (plan, out) = compile(&m);
    assert_eq!(
        plan.fusion.kernels.len(),
        1,
        "one matmul kernel with its epilogue"
    );
    let p = &out.lowered.program;
    // The four heads are four 128 × 128 output blocks (the stationary free axis is at
    // most 128 wide), one record each.
    let mm = named(p, "MultiplyMoving");
    assert_eq!(mm.iter().map(|i| i.count).sum::<u32>(), 4);
    assert_eq!(mm.len(), 4, "one record per head");
    // The square of the 128 × 128 mask: one instruction over 128 partitions × 128
    // elements (not four records of a quarter each).
    let sq: Vec<&Instr> = p
        .instrs
        .iter()
        .filter(|i| i.op.mnemonic().contains("square"))
        .collect();
    assert_eq!(sq.len(), 1, "{:?}", sq);
    assert_eq!((sq[0].partitions, sq[0].free, sq[0].count), (128, 128, 1));
    // It comes before every head's use of it (the first record, before its matmul).
    assert!(sq[0].id < mm[0].id);
    // The exponential of the 4 × 128 vector: each head reads only its own 128 values, so
    // it stays one record per head.
    let exp: Vec<&Instr> = p
        .instrs
        .iter()
        .filter(|i| i.op.mnemonic().contains("exponential"))
        .collect();
    assert_eq!(exp.len(), 4, "{:?}", exp);
}

/// The clean-up pipeline `compile` runs, then `recompute-for-contraction`.
const RECOMPUTE: &str = "strip-sharding,inline,decompose-batch-norm,\
     fixpoint<8>(canonicalize,cse,dce,narrow-index),sink-constants,recompute-for-contraction,dce";

#[test]
fn bert_recomputed_attention_transposes_its_mask_once_per_layer() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/models/bert_base_infer.mlir"
    );
    let src = std::fs::read_to_string(path).expect("fixture");
    let mut m = parse_module(&src).expect("parse");
    let pipeline = Pipeline::parse(RECOMPUTE).expect("pipeline");
    run_pipeline(&mut m, &pipeline, &mut PassContext::new()).expect("passes");
    let (plan, out) = compile(&m);
    // The plan's relayouts: the recomputed copy of each layer's [q, k] attention mask
    // (1 × 128 × 128 FP32 = 64 KiB = one 128 × 128 block) moves to keys-on-partitions.
    let rel = &plan.layout.relayouts;
    assert_eq!(rel.len(), 12, "{rel:?}");
    let block = 128 * 128 * 4;
    let blocks: u64 = rel.iter().map(|r| r.bytes.div_ceil(block)).sum();
    assert_eq!(blocks, 12);
    // Each is one TensorE transpose and one PSUM eviction, not one per head (12 heads).
    let p = &out.lowered.program;
    assert_eq!(count(p, |o| *o == Opcode::Transpose), blocks);
    // The mask itself (and, compare, select over 128 × 128) is computed once in each
    // layer's attention kernel (the kernels with a matmul and an exponential): one `and`
    // instruction of 128 partitions × 128 elements each.
    let kernels_with = |name: &str| -> std::collections::BTreeSet<u32> {
        p.instrs
            .iter()
            .filter(|i| i.op.mnemonic().contains(name))
            .map(|i| i.kernel)
            .collect()
    };
    let mm = kernels_with("MultiplyMoving");
    let attention: Vec<u32> = kernels_with("exponential")
        .intersection(&mm)
        .copied()
        .collect();
    assert_eq!(attention.len(), 12, "{attention:?}");
    for k in attention {
        let and: Vec<&Instr> = named(p, "TensorOp.and")
            .into_iter()
            .filter(|i| i.kernel == k)
            .collect();
        assert_eq!(and.len(), 1, "kernel {k}: {and:?}");
        assert_eq!(
            (and[0].partitions, and[0].free, and[0].count),
            (128, 128, 1)
        );
    }
}
