//! Broadcast operands of elementwise ops (`engine::operands`): a broadcast along the
//! partition dimension is a `[P, 1]` operand (one tensor input, any elementwise engine),
//! one that varies along the free axis is a full tile the instruction reads (two tensor
//! inputs, about 2N cycles on VectorE or GpSimd, never ScalarE: `neuron-facts.md` §1.5,
//! §2.3: ScalarE reads one tensor, nothing replicates a row across partitions).

use neuronc_backend::engine::isa::{Engine, Opcode};
use neuronc_backend::engine::{compile_function, EngineOptions};
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

const SRC: &str = r#"func.func @main(%x: tensor<256x512xf32>, %row: tensor<512xf32>, %col: tensor<256xf32>) -> (tensor<256x512xf32>, tensor<256x512xf32>) {
  %r = stablehlo.broadcast_in_dim %row, dims = [1] : (tensor<512xf32>) -> tensor<256x512xf32>
  %c = stablehlo.broadcast_in_dim %col, dims = [0] : (tensor<256xf32>) -> tensor<256x512xf32>
  %a = stablehlo.subtract %x, %r : tensor<256x512xf32>
  %b = stablehlo.multiply %x, %c : tensor<256x512xf32>
  return %a, %b : tensor<256x512xf32>, tensor<256x512xf32>
}"#;

#[test]
fn a_row_broadcast_is_a_full_tile_and_a_column_broadcast_a_partition_scalar() {
    let m = parse_module(SRC).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    let opts = EngineOptions {
        combine: false,
        ..EngineOptions::default()
    };
    let out = compile_function(&m, &f, &plan, &opts).expect("compile");
    let x = m.region(f.body).args[0];
    let part = plan.layout.of(x).expect("x has a partition dimension");
    // The operand that varies along the partition dimension is the scalar one.
    let (scalar_op, tile_op) = if part == 0 {
        ("multiply", "subtract")
    } else {
        ("subtract", "multiply")
    };
    let of = |name: &str| -> Vec<(Engine, u8)> {
        out.lowered
            .program
            .instrs
            .iter()
            .filter_map(|i| match &i.op {
                Opcode::Elementwise { op, inputs } if op == name => Some((i.engine, *inputs)),
                Opcode::Activation { func, .. } if func == name => Some((i.engine, 1)),
                _ => None,
            })
            .collect()
    };
    let (s, t) = (of(scalar_op), of(tile_op));
    assert!(!s.is_empty() && !t.is_empty(), "{s:?} {t:?}");
    assert!(s.iter().all(|&(_, n)| n == 1), "{scalar_op}: {s:?}");
    assert!(
        t.iter()
            .all(|&(e, n)| n == 2 && matches!(e, Engine::Vector | Engine::GpSimd)),
        "{tile_op}: {t:?}"
    );
}
