//! Storage of values between kernels under `--auto-cast`: an FP32 value that only TensorE
//! matmuls read is held as BF16 (half the bytes per partition), because the matmul rounds
//! its operands to BF16 anyway (`neuron-facts.md` §1.2, §1.7); any other use, or no
//! auto-cast, keeps FP32. Sizes follow by hand from the shapes: a 256 × 512 value takes
//! 2 partition tiles × 512 × 4 B = 4096 B per partition in FP32 (or 4 × 256 × 4 B with
//! the other dimension on partitions — the same), 2048 B in BF16.

use neuronc_backend::engine::isa::{Mem, Opcode, Program};
use neuronc_backend::engine::{compile_function, AutoCast, EngineOptions};
use neuronc_ir::{parse_module, OpKind};
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

/// The engine program of `src` under `auto_cast`, and the buffer name of the result of
/// its `stablehlo.exponential`.
fn compile_exp(src: &str, auto_cast: AutoCast) -> (Program, String) {
    let m = parse_module(src).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    let opts = EngineOptions {
        auto_cast,
        ..EngineOptions::default()
    };
    let out = compile_function(&m, &f, &plan, &opts).expect("compile");
    let mut exp = None;
    m.walk_ops(|op| {
        if m.op(op).kind == OpKind::Exponential {
            exp = m.op(op).results.first().copied();
        }
    });
    let name = format!("{}", exp.expect("an exponential"));
    (out.lowered.program, name)
}

/// Bytes per partition of the SBUF buffer that holds the result of the module's
/// `stablehlo.exponential` between kernels.
fn resident_bytes(src: &str, auto_cast: AutoCast) -> u64 {
    let (p, name) = compile_exp(src, auto_cast);
    let bufs: Vec<u64> = p
        .buffers
        .iter()
        .filter(|b| b.mem == Mem::Sbuf && b.name == name)
        .map(|b| b.bytes)
        .collect();
    assert_eq!(bufs.len(), 1, "one resident buffer for {name}: {bufs:?}");
    bufs[0]
}

const ONLY_MATMUL: &str = r#"
func.func @main(%x: tensor<256x512xf32>, %w: tensor<512x128xf32>) -> tensor<256x128xf32> {
  %h = stablehlo.exponential %x : tensor<256x512xf32>
  %y = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<256x512xf32>, tensor<512x128xf32>) -> tensor<256x128xf32>
  return %y : tensor<256x128xf32>
}
"#;

const ALSO_ELEMENTWISE: &str = r#"
func.func @main(%x: tensor<256x512xf32>, %w: tensor<512x128xf32>) -> (tensor<256x128xf32>, tensor<256x512xf32>) {
  %h = stablehlo.exponential %x : tensor<256x512xf32>
  %y = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<256x512xf32>, tensor<512x128xf32>) -> tensor<256x128xf32>
  %z = stablehlo.multiply %y, %y : tensor<256x128xf32>
  %u = stablehlo.add %h, %h : tensor<256x512xf32>
  return %z, %u : tensor<256x128xf32>, tensor<256x512xf32>
}
"#;

#[test]
fn a_value_only_matmuls_read_is_held_as_bf16_under_auto_cast() {
    assert_eq!(resident_bytes(ONLY_MATMUL, AutoCast::Matmult), 2048);
}

#[test]
fn without_auto_cast_it_stays_fp32() {
    assert_eq!(resident_bytes(ONLY_MATMUL, AutoCast::None), 4096);
}

#[test]
fn an_elementwise_use_keeps_fp32() {
    assert_eq!(resident_bytes(ALSO_ELEMENTWISE, AutoCast::Matmult), 4096);
}

const SCATTER_INTO_ZEROS: &str = r#"
func.func @main(%idx: tensor<64x1xi64>, %upd: tensor<64x1024xf32>) -> tensor<16384x1024xf32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<16384x1024xf32>
  %s = "stablehlo.scatter"(%z, %idx, %upd) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<16384x1024xf32>, tensor<64x1xi64>, tensor<64x1024xf32>) -> tensor<16384x1024xf32>
  %e = stablehlo.exponential %s : tensor<16384x1024xf32>
  return %e : tensor<16384x1024xf32>
}
"#;

#[test]
fn a_splat_constant_never_crosses_dma() {
    // The 64 MiB zero table (its own kernel in the plan, as in the BERT training step) is
    // filled on chip: no HBM buffer holds it. What DMA reads is the indices (64 × 8 B),
    // the updates (64 × 1024 × 4 B) and the scatter result once (64 MiB cannot stay in
    // the 24 MiB of SBUF until the exponential reads it).
    let m = parse_module(SCATTER_INTO_ZEROS).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    let out = compile_function(&m, &f, &plan, &EngineOptions::default()).expect("compile");
    let p = &out.lowered.program;
    let mut zeros = None;
    m.walk_ops(|op| {
        if m.op(op).kind == OpKind::Constant {
            zeros = m.op(op).results.first().copied();
        }
    });
    let name = format!("{}", zeros.expect("the constant"));
    assert!(p
        .buffers
        .iter()
        .all(|b| b.name != name || b.mem != Mem::Hbm));
    let loaded: u64 = p
        .instrs
        .iter()
        .filter(|i| i.op == Opcode::Load)
        .map(|i| i.partitions as u64 * i.free as u64)
        .sum();
    assert_eq!(loaded, 64 * 8 + 64 * 1024 * 4 + 16384 * 1024 * 4);
}

/// Bytes of the HBM copy of the module's `stablehlo.exponential` result, and the bytes
/// all loads read from it.
fn hbm_copy_bytes(src: &str, auto_cast: AutoCast) -> (u64, u64) {
    let (p, name) = compile_exp(src, auto_cast);
    let ids: Vec<usize> = (0..p.buffers.len())
        .filter(|&b| p.buffers[b].mem == Mem::Hbm && p.buffers[b].name == name)
        .collect();
    assert_eq!(ids.len(), 1, "one HBM copy of {name}");
    let loaded = p
        .instrs
        .iter()
        .filter(|i| i.op == Opcode::Load && i.reads.contains(&(ids[0] as u32)))
        .map(|i| i.partitions as u64 * i.free as u64 * i.count as u64)
        .sum();
    (p.buffers[ids[0]].bytes, loaded)
}

// `%h` (16384 × 1024 FP32 = 64 MiB, 512 KiB per partition) cannot stay in SBUF (192 KiB
// per partition), so its producer stores it to HBM for the matmul. The add in its own
// kernel keeps it from being narrowed everywhere.
const LATER_ONLY_MATMUL: &str = r#"
func.func @main(%x: tensor<16384x1024xf32>, %w: tensor<1024x128xf32>) -> (tensor<16384x1024xf32>, tensor<16384x128xf32>) {
  %h = stablehlo.exponential %x : tensor<16384x1024xf32>
  %u = stablehlo.add %h, %h : tensor<16384x1024xf32>
  %y = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<16384x1024xf32>, tensor<1024x128xf32>) -> tensor<16384x128xf32>
  return %u, %y : tensor<16384x1024xf32>, tensor<16384x128xf32>
}
"#;

// The same, plus an elementwise reader of `%h` after the matmul.
const LATER_ELEMENTWISE: &str = r#"
func.func @main(%x: tensor<16384x1024xf32>, %w: tensor<1024x128xf32>) -> (tensor<16384x1024xf32>, tensor<16384x1024xf32>) {
  %h = stablehlo.exponential %x : tensor<16384x1024xf32>
  %u = stablehlo.add %h, %h : tensor<16384x1024xf32>
  %y = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<16384x1024xf32>, tensor<1024x128xf32>) -> tensor<16384x128xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %s = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16384x128xf32>, tensor<f32>) -> tensor<16384xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<16384xf32>) -> tensor<16384x1024xf32>
  %v = stablehlo.multiply %h, %b : tensor<16384x1024xf32>
  return %u, %v : tensor<16384x1024xf32>, tensor<16384x1024xf32>
}
"#;

const H_FP32: u64 = 16384 * 1024 * 4;

#[test]
fn a_value_stored_for_matmuls_only_goes_to_hbm_as_bf16() {
    // Written once as BF16 (half of 64 MiB) and read back as BF16 by the matmul.
    let (copy, loaded) = hbm_copy_bytes(LATER_ONLY_MATMUL, AutoCast::Matmult);
    assert_eq!(copy, H_FP32 / 2);
    assert!(loaded > 0 && loaded % (H_FP32 / 2) == 0, "loaded {loaded}");
}

#[test]
fn a_later_elementwise_reader_keeps_the_hbm_copy_fp32() {
    let (copy, loaded) = hbm_copy_bytes(LATER_ELEMENTWISE, AutoCast::Matmult);
    assert_eq!(copy, H_FP32);
    assert!(loaded > 0 && loaded % H_FP32 == 0, "loaded {loaded}");
}

#[test]
fn without_auto_cast_the_hbm_copy_stays_fp32() {
    let (copy, loaded) = hbm_copy_bytes(LATER_ONLY_MATMUL, AutoCast::None);
    assert_eq!(copy, H_FP32);
    assert!(loaded > 0 && loaded % H_FP32 == 0, "loaded {loaded}");
}
