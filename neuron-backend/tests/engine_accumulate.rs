//! ScalarE's free-axis accumulate (`engine::accumulate`): softmax's sum of exponentials is
//! accumulated by the ScalarE `exp` instruction that produces them, leaving a read-back of
//! the accumulator registers (about 64 cycles, `neuron-facts.md` §2.3) instead of a VectorE
//! reduction over the row; a sum of a VectorE result stays a VectorE reduction.

use neuronc_backend::engine::isa::{Engine, Opcode};
use neuronc_backend::engine::{compile_function, EngineOptions, EngineOutput};
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

/// Row softmax over 512 columns of 256 rows; `$SUMMED` is what the row sum reads.
const SRC: &str = r#"func.func @main(%x: tensor<256x512xf32>, %y: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<256x512xf32>, tensor<f32>) -> tensor<256xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<256xf32>) -> tensor<256x512xf32>
  %d = stablehlo.subtract %x, %mb : tensor<256x512xf32>
  %e = stablehlo.exponential %d : tensor<256x512xf32>
  %v = stablehlo.add %e, %y : tensor<256x512xf32>
  %s = stablehlo.reduce($SUMMED init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<256x512xf32>, tensor<f32>) -> tensor<256xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<256xf32>) -> tensor<256x512xf32>
  %p = stablehlo.divide %v, %sb : tensor<256x512xf32>
  return %p : tensor<256x512xf32>
}"#;

fn compile(summed: &str) -> EngineOutput {
    let m = parse_module(&SRC.replace("$SUMMED", summed)).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    compile_function(&m, &f, &plan, &EngineOptions::default()).expect("compile")
}

/// (engines of accumulator read-backs, VectorE add-reduces).
fn sums(out: &EngineOutput) -> (Vec<Engine>, usize) {
    let instrs = &out.lowered.program.instrs;
    let reads = instrs
        .iter()
        .filter(|i| matches!(&i.op, Opcode::Activation { func, .. } if func == "accumulate.add"))
        .map(|i| i.engine)
        .collect();
    let vector = instrs
        .iter()
        .filter(|i| matches!(&i.op, Opcode::ReduceFree { op } if op == "add"))
        .count();
    (reads, vector)
}

#[test]
fn the_sum_of_exponentials_is_accumulated_by_the_exponential() {
    let (reads, vector) = sums(&compile("%e"));
    assert!(!reads.is_empty(), "an accumulator read-back per tile");
    assert!(reads.iter().all(|&e| e == Engine::Scalar), "{reads:?}");
    assert_eq!(vector, 0);
}

#[test]
fn the_sum_of_a_vector_result_stays_a_vector_reduction() {
    let (reads, vector) = sums(&compile("%v"));
    assert!(reads.is_empty(), "{reads:?}");
    assert!(vector > 0);
}
