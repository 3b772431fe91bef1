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
fn bert_recomputed_attention_needs_no_mask_transpose() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/models/bert_base_infer.mlir"
    );
    let src = std::fs::read_to_string(path).expect("fixture");
    let mut m = parse_module(&src).expect("parse");
    let pipeline = Pipeline::parse(RECOMPUTE).expect("pipeline");
    run_pipeline(&mut m, &pipeline, &mut PassContext::new()).expect("passes");
    let (plan, out) = compile(&m);
    // canonicalize's broadcast sinking computes torch's extended attention mask (and,
    // compare, select over [1, 1, 128, 128]) on the [1, 1, 1, 128] key vector and
    // broadcasts it over the queries after: the recomputed copy of each layer's scores
    // (keys on the partitions) reads it as a per-partition bias, so nothing is relaid.
    let rel = &plan.layout.relayouts;
    assert!(rel.is_empty(), "{rel:?}");
    let p = &out.lowered.program;
    assert_eq!(count(p, |o| *o == Opcode::Transpose), 0);
    // The mask's ops run on the 128-element key vector (duplicated into the kernels that
    // read it, as cheap producers are), never on the [128, 128] mask.
    let and = named(p, "TensorOp.and");
    assert!(!and.is_empty());
    for a in and {
        let elems = a.partitions as u64 * a.free as u64 * a.count as u64;
        assert!(elems <= 128, "{a:?}");
    }
}
