//! Regression: in the backward of a cross-entropy with ignore_index
//! (`loss = sum(nll*w) / sum(w)`, LLaMA and T5 training steps), `neuron-fuse` merged two
//! full reductions into one kernel although one of them depends, through another kernel,
//! on the other: the two kernels then consumed each other's results (a cycle, printed as a
//! use before its definition). The plan must stay acyclic and the results unchanged
//! (expected values: the interpreter on the original text).

use neuronc_interp::{run_function, RunOptions, Tensor};
use neuronc_ir::parse_module;
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

const SRC: &str = r#"
func.func @main(%a: tensor<32x48xf32>, %d: tensor<32x48xf32>) -> (tensor<f32>, tensor<32xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.negate %a : tensor<32x48xf32>
  %3 = stablehlo.multiply %d, %a : tensor<32x48xf32>
  %4 = stablehlo.multiply %0, %3 : tensor<32x48xf32>
  %5 = stablehlo.reduce(%4 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<32x48xf32>, tensor<f32>) -> tensor<f32>
  %6 = stablehlo.reduce(%3 init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<32x48xf32>, tensor<f32>) -> tensor<f32>
  %7 = stablehlo.divide %5, %6 : tensor<f32>
  %10 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<f32>) -> tensor<32x48xf32>
  %11 = stablehlo.divide %4, %10 : tensor<32x48xf32>
  %12 = stablehlo.reduce(%11 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<32x48xf32>, tensor<f32>) -> tensor<32xf32>
  return %7, %12 : tensor<f32>, tensor<32xf32>
}
"#;

#[test]
fn merged_reductions_never_form_a_kernel_cycle() {
    let m = parse_module(SRC).unwrap();
    let a: Vec<f32> = (0..32 * 48)
        .map(|i| ((i * 7 % 23) as f32 - 11.0) / 13.0)
        .collect();
    let d: Vec<f32> = (0..32 * 48)
        .map(|i| ((i * 5 % 19) as f32 - 4.0) / 9.0)
        .collect();
    let inputs = vec![
        Tensor::from_f32(&[32, 48], &a).unwrap(),
        Tensor::from_f32(&[32, 48], &d).unwrap(),
    ];
    let want = run_function(&m, "main", inputs.clone(), &RunOptions::default()).unwrap();
    for pipeline in ["neuron-fuse", "inline,decompose-batch-norm,fixpoint<8>(canonicalize,cse,dce),sink-constants,neuron-fuse,dce"] {
        let mut opt = m.clone();
        let mut ctx = PassContext::new();
        ctx.verify_each = true;
        run_pipeline(&mut opt, &Pipeline::parse(pipeline).unwrap(), &mut ctx)
            .unwrap_or_else(|e| panic!("{pipeline}: {e}"));
        let got = run_function(&opt, "main", inputs.clone(), &RunOptions::default()).unwrap();
        for (w, g) in want.iter().zip(&got) {
            neuronc_interp::compare(w, g, 1e-5, 1e-6).unwrap_or_else(|e| panic!("{pipeline}: {e}"));
        }
    }
}
