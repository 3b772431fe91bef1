//! A matmul whose operands cannot fit SBUF whole per output tile (the vocabulary
//! contraction of a masked-LM gradient: 30,522 rows) streams its contraction in chunks of
//! 128-row K tiles instead of failing with `SbufOverflow`.
//!
//! Sizes by hand: `a: 128x65536` and `b: 65536x128` in FP32 with K = 65,536 on the
//! partitions take 65,536 / 128 = 512 K tiles x 128 columns x 4 B = 256 KiB per partition
//! each, and the output (128 x 128) is one tile, so one record needs both operands whole:
//! 512 KiB, more than the 192 KiB of a partition. In 2 chunks each slot is 128 KiB (256
//! KiB in all, still too much); in 4 chunks 64 KiB (128 KiB in all), which fits.

use neuronc_backend::engine::isa::{Mem, Opcode};
use neuronc_backend::engine::{compile_function, AutoCast, EngineError, EngineOptions};
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

const HUGE_K: &str = r#"
func.func @main(%a: tensor<128x65536xf32>, %b: tensor<65536x128xf32>) -> tensor<128x128xf32> {
  %y = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<128x65536xf32>, tensor<65536x128xf32>) -> tensor<128x128xf32>
  return %y : tensor<128x128xf32>
}
"#;

#[test]
fn a_huge_contraction_streams_its_operands_in_k_chunks() {
    let m = parse_module(HUGE_K).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    let opts = EngineOptions {
        auto_cast: AutoCast::None,
        ..EngineOptions::default()
    };
    let out = match compile_function(&m, &f, &plan, &opts) {
        Ok(out) => out,
        Err(EngineError::SbufOverflow { needed, .. }) => {
            panic!("the matmul should stream its contraction, not overflow ({needed} B)")
        }
        Err(e) => panic!("compile: {e}"),
    };
    let p = &out.lowered.program;
    let operand_pp = 65536 / 128 * 128 * 4;
    let slots: Vec<u64> = p
        .buffers
        .iter()
        .filter(|b| b.mem == Mem::Sbuf && b.bytes > 4096)
        .map(|b| b.bytes)
        .collect();
    assert_eq!(slots, vec![operand_pp / 4, operand_pp / 4], "operand slots");
    // The loads still move both operands whole.
    let loaded: u64 = p
        .instrs
        .iter()
        .filter(|i| i.op == Opcode::Load)
        .map(|i| i.partitions as u64 * i.free as u64 * i.count as u64)
        .sum();
    assert_eq!(loaded, 2 * 128 * 65536 * 4);
}
