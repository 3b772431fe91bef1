//! Zero-element tensors are legal StableHLO: contractions and convolutions with a
//! zero-size dimension must lower (no zero-tile division) and simulate to the values the
//! spec gives: an empty result, or zeros for a contraction over a zero-size dimension.

use neuronc_backend::engine::{compile_function, EngineOptions};
use neuronc_backend::sim::{simulate, SimOptions};
use neuronc_interp::Tensor;
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

/// Lowers `src` for the engines and simulates it on `inputs`.
fn lower_and_simulate(src: &str, inputs: Vec<Tensor>) -> Vec<Tensor> {
    let m = parse_module(src).expect("parse");
    let f = m.entry().expect("entry").clone();
    let plan = plan_function(&m, &f, &FusionConfig::default());
    compile_function(&m, &f, &plan, &EngineOptions::default()).expect("lowers");
    simulate(&m, &f, &plan, &SimOptions::default(), inputs).expect("simulates")
}

fn f32s(shape: &[i64], n: usize) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| i as f32 - 1.5).collect();
    Tensor::from_f32(shape, &v).expect("tensor")
}

#[test]
fn dot_with_zero_rows_is_empty() {
    let src = r#"func.func @main(%a: tensor<0x4xf32>, %b: tensor<4x3xf32>) -> tensor<0x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<0x4xf32>, tensor<4x3xf32>) -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}"#;
    let out = lower_and_simulate(src, vec![f32s(&[0, 4], 0), f32s(&[4, 3], 12)]);
    assert_eq!(out[0].shape(), &[0, 3]);
    assert_eq!(out[0].len(), 0);
}

#[test]
fn contraction_over_zero_size_dimension_is_zeros() {
    let src = r#"func.func @main(%a: tensor<4x0xf32>, %b: tensor<0x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x0xf32>, tensor<0x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}"#;
    let out = lower_and_simulate(src, vec![f32s(&[4, 0], 0), f32s(&[0, 3], 0)]);
    assert_eq!(out[0].shape(), &[4, 3]);
    assert_eq!(out[0].to_f64_vec(), vec![0.0; 12]);
}

#[test]
fn convolution_of_an_empty_batch_is_empty() {
    let src = r#"func.func @main(%x: tensor<0x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) -> tensor<0x4x6x6xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<0x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<0x4x6x6xf32>
  return %0 : tensor<0x4x6x6xf32>
}"#;
    let out = lower_and_simulate(src, vec![f32s(&[0, 3, 8, 8], 0), f32s(&[4, 3, 3, 3], 108)]);
    assert_eq!(out[0].shape(), &[0, 4, 6, 6]);
    assert_eq!(out[0].len(), 0);
}
