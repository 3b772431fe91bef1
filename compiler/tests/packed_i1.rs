//! torch_xla 2.9 (`xm.get_stablehlo`) prints dense `i1` constants as bit-packed hex, least
//! significant bit first (the LLaMA rotary masks of a training step: `tensor<2x4x16x8xi1>`
//! as 128 bytes). jaxlib rejects that text; we read it, run it, and print a form with one
//! byte per element. Expected values are the bits of 0x0F, 0xF0 read LSB first.

use neuronc_interp::{run_function, RunOptions};
use neuronc_ir::{print_module, PrintOptions};

const SRC: &str = r#"func.func @main() -> tensor<16xi32> {
  %c = stablehlo.constant dense<"0x0FF0"> : tensor<16xi1>
  %r = stablehlo.convert %c : (tensor<16xi1>) -> tensor<16xi32>
  return %r : tensor<16xi32>
}"#;

const WANT: [i64; 16] = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1];

#[test]
fn bit_packed_i1_hex_reads_lsb_first_and_prints_unpacked() {
    let m = neuronc::compile("packed", SRC).expect("verifies");
    let out = run_function(&m, "main", vec![], &RunOptions::default()).expect("runs");
    assert_eq!(out[0].as_i64().expect("ints"), &WANT);
    // The printed form reads back to the same values (one byte or one literal per element).
    let text = print_module(&m, &PrintOptions::default());
    assert!(
        !text.contains("0x0FF0"),
        "printed the packed form again:\n{text}"
    );
    let back = neuronc::compile("printed", &text).expect("printed text verifies");
    let out = run_function(&back, "main", vec![], &RunOptions::default()).expect("runs");
    assert_eq!(out[0].as_i64().expect("ints"), &WANT);
}
