//! A tuple too wide to copy into a consumer kernel (1 scalar + 16 tensors: copying it
//! would exceed the kernel's input limit), read through a `get_tuple_element` that *is*
//! copied into that kernel: the pattern of torch_xla's scan-based training steps, where
//! the fusion plan used to drop the tuple's kernel, so the simulator found the tuple never
//! computed. The simulated results must equal the interpreter's (the oracle checked
//! against XLA; no auto-cast, so the matmul differs only by FP32 accumulation order).

use neuronc_backend::engine::{compile_function, AutoCast, EngineOptions};
use neuronc_backend::sim::{simulate, SimOptions};
use neuronc_interp::Tensor;
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};

fn wide_tuple_module() -> String {
    let n = 16;
    let args: Vec<String> = (0..n).map(|i| format!("%a{i}: tensor<4x4xf32>")).collect();
    let ops: Vec<String> = (0..n).map(|i| format!("%a{i}")).collect();
    let tys = vec!["tensor<4x4xf32>"; n].join(", ");
    let tup = format!("tuple<tensor<i64>, {tys}>");
    format!(
        r#"func.func @main(%s: tensor<i64>, {args}, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<16xf32>, tensor<4x4xf32>) {{
  %t = stablehlo.tuple %s, {ops} : {tup}
  %g = stablehlo.get_tuple_element %t[1] : ({tup}) -> tensor<4x4xf32>
  %r = stablehlo.reshape %g : (tensor<4x4xf32>) -> tensor<16xf32>
  %e = stablehlo.exponential %r : tensor<16xf32>
  %r2 = stablehlo.reshape %r : (tensor<16xf32>) -> tensor<4x4xf32>
  %d = stablehlo.dot_general %r2, %w, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = stablehlo.get_tuple_element %t[2] : ({tup}) -> tensor<4x4xf32>
  %n = stablehlo.negate %h : tensor<4x4xf32>
  return %d, %e, %n : tensor<4x4xf32>, tensor<16xf32>, tensor<4x4xf32>
}}"#,
        args = args.join(", "),
        ops = ops.join(", "),
    )
}

#[test]
fn wide_tuple_read_through_a_copied_get_tuple_element_is_computed() {
    let m = parse_module(&wide_tuple_module()).expect("parse");
    let f = m.entry().expect("entry").clone();
    let mut inputs = vec![Tensor::from_i64(neuronc_ir::ElemType::Int(64), &[], &[3]).unwrap()];
    for a in 0..17 {
        let v: Vec<f32> = (0..16).map(|i| ((a * 16 + i) % 7) as f32 - 3.0).collect();
        inputs.push(Tensor::from_f32(&[4, 4], &v).unwrap());
    }
    let want = neuronc_interp::run_function(&m, &f.name, inputs.clone(), &Default::default())
        .expect("interprets");
    let plan = plan_function(&m, &f, &FusionConfig::default());
    compile_function(&m, &f, &plan, &EngineOptions::default()).expect("lowers");
    let opts = SimOptions {
        auto_cast: AutoCast::None,
    };
    let got = simulate(&m, &f, &plan, &opts, inputs).expect("simulates");
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape(), w.shape());
        for (x, y) in g.to_f64_vec().iter().zip(w.to_f64_vec()) {
            assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{x} vs {y}");
        }
    }
}
