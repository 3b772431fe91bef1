//! Structural tests of the emitted `HloModuleProto`: prost round trip, byte determinism,
//! the torch-neuronx conventions (neuron-facts §3.2: neff names, tuple root, row-major
//! layouts, input/output aliases) and the optional `AwsNeuronErf` mapping (§3.4).
//! Numerics are checked against real XLA by `hlo_oracle.rs`.

use neuronc_backend::hlo::proto::{AliasKind, HloModuleProto, PrimitiveType, ShapeProto};
use neuronc_backend::hlo::{emit_hlo_module, HloOptions};
use prost::Message;
use std::collections::HashSet;

const SMALL: &str = r#"
module @small {
  func.func public @main(%arg0: tensor<2x3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<2x3xf32>
    %1 = chlo.erf %0 : tensor<2x3xf32> -> tensor<2x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
    return %1, %2 : tensor<2x3xf32>, tensor<f32>
  }
}
"#;

fn emit(src: &str, opts: &HloOptions) -> neuronc_backend::HloArtifacts {
    let m = neuronc_ir::parse_module(src).expect("test module parses");
    emit_hlo_module(&m, opts).expect("test module emits")
}

fn check_layouts(s: &ShapeProto) {
    if s.element_type == PrimitiveType::Tuple as i32 {
        s.tuple_shapes.iter().for_each(check_layouts);
        return;
    }
    if s.element_type == PrimitiveType::Token as i32 {
        return;
    }
    let rank = s.dimensions.len() as i64;
    let l = s.layout.as_ref().expect("array shapes carry a layout");
    assert_eq!(l.minor_to_major, (0..rank).rev().collect::<Vec<_>>());
    assert!(s.is_dynamic_dimension.iter().all(|d| !d));
}

#[test]
fn round_trips_through_prost_and_is_deterministic() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/jax/control_flow.mlir"
    );
    let srcs = [
        SMALL.to_string(),
        std::fs::read_to_string(path).unwrap_or_default(),
    ];
    for src in srcs.iter().filter(|s| !s.is_empty()) {
        let a = emit(src, &HloOptions::default());
        let b = emit(src, &HloOptions::default());
        assert_eq!(a.bytes, b.bytes, "same input, same bytes");
        assert_eq!(a.text, b.text);
        let decoded = HloModuleProto::decode(a.bytes.as_slice()).expect("decodes");
        assert_eq!(decoded, a.proto);
        assert_eq!(decoded.encode_to_vec(), a.bytes);
    }
}

#[test]
fn follows_torch_neuronx_conventions() {
    let a = emit(SMALL, &HloOptions::default());
    let p = &a.proto;
    let entry = p.computations.last().expect("entry is last");
    assert_eq!(entry.id, p.entry_computation_id);
    assert_eq!(entry.name, p.entry_computation_name);
    let root = entry
        .instructions
        .iter()
        .find(|i| i.id == entry.root_id)
        .expect("root exists");
    assert_eq!(root.opcode, "tuple");
    assert_eq!(root.operand_ids.len(), 2);
    let fa = root
        .frontend_attributes
        .as_ref()
        .expect("root names outputs");
    assert_eq!(fa.map["neff_output_names"], "output0,output1");
    let params: Vec<_> = entry
        .instructions
        .iter()
        .filter(|i| i.opcode == "parameter")
        .collect();
    assert_eq!(params.len(), 2);
    for p in &params {
        let fa = p
            .frontend_attributes
            .as_ref()
            .expect("parameters are named");
        assert_eq!(
            fa.map["neff_input_name"],
            format!("input{}", p.parameter_number)
        );
    }
    // tf.aliasing_output = 0 on %arg0: output {0} aliases parameter 0.
    let alias = p.input_output_alias.as_ref().expect("alias emitted");
    assert_eq!(alias.entries.len(), 1);
    assert_eq!(alias.entries[0].output_shape_index, vec![0]);
    assert_eq!(alias.entries[0].parameter_number, 0);
    assert_eq!(alias.entries[0].kind, AliasKind::MustAlias as i32);
    assert!(a
        .text
        .contains("input_output_alias={ {0}: (0, {}, must-alias) }"));
}

#[test]
fn ids_unique_layouts_row_major_callees_first() {
    let a = emit(SMALL, &HloOptions::default());
    let mut ids = HashSet::new();
    let mut seen_comps = HashSet::new();
    for c in &a.proto.computations {
        let mut local = HashSet::new();
        for i in &c.instructions {
            assert!(ids.insert(i.id), "instruction id {} reused", i.id);
            check_layouts(i.shape.as_ref().expect("shape"));
            for o in &i.operand_ids {
                assert!(local.contains(o), "operand {o} defined before use");
            }
            for called in &i.called_computation_ids {
                assert!(
                    seen_comps.contains(called),
                    "callee {called} precedes caller"
                );
            }
            local.insert(i.id);
        }
        assert!(seen_comps.insert(c.id));
    }
    let reduce = a
        .proto
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .find(|i| i.opcode == "reduce");
    let reduce = reduce.expect("reduce lowered");
    assert_eq!(reduce.dimensions, vec![0, 1]);
    assert_eq!(reduce.called_computation_ids.len(), 1);
}

#[test]
fn erf_maps_to_aws_neuron_custom_call_only_when_asked() {
    let plain = emit(SMALL, &HloOptions::default());
    let ops: Vec<_> = plain
        .proto
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .collect();
    assert!(ops.iter().any(|i| i.opcode == "erf"));
    assert!(!ops.iter().any(|i| i.opcode == "custom-call"));
    let neuron = emit(
        SMALL,
        &HloOptions {
            neuron_custom_calls: true,
            ..HloOptions::default()
        },
    );
    let cc: Vec<_> = neuron
        .proto
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| i.opcode == "custom-call")
        .collect();
    assert_eq!(cc.len(), 1);
    assert_eq!(cc[0].custom_call_target, "AwsNeuronErf");
    assert!(neuron.text.contains("custom_call_target=\"AwsNeuronErf\""));
}
