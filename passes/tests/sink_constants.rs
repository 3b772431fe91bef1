//! `sink-constants`: regions stop capturing outer constants, and results do not change.
//! The module is torch_xla's `any(dim)` (a reduce body selecting between an outer `true`
//! and `false`) plus a sort comparator capturing a constant two regions deep; expected
//! results come from the interpreter on the original text, and `any` is also checked by
//! hand.

use neuronc_interp::{run_function, RunOptions, Tensor};
use neuronc_ir::{parse_module, Module, RegionId, ValueDef};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};

const SRC: &str = r#"
func.func @main(%x: tensor<4x9xi64>, %y: tensor<4x9xi64>, %v: tensor<6xf32>) -> (tensor<4xi1>, tensor<6xf32>) {
  %t = stablehlo.constant dense<true> : tensor<i1>
  %f = stablehlo.constant dense<false> : tensor<i1>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.compare EQ, %x, %y : (tensor<4x9xi64>, tensor<4x9xi64>) -> tensor<4x9xi1>
  %r = stablehlo.reduce(%m init: %f) across dimensions = [1] : (tensor<4x9xi1>, tensor<i1>) -> tensor<4xi1>
   reducer(%a: tensor<i1>, %b: tensor<i1>)  {
    %o = stablehlo.or %a, %b : tensor<i1>
    %s = stablehlo.select %o, %t, %f : tensor<i1>, tensor<i1>
    stablehlo.return %s : tensor<i1>
  }
  %sorted = "stablehlo.sort"(%v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %pa = stablehlo.abs %p : tensor<f32>
    %qa = stablehlo.abs %q : tensor<f32>
    %c = stablehlo.compare GT, %pa, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lt = stablehlo.compare LT, %pa, %qa : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %w = stablehlo.and %c, %lt : tensor<i1>
    stablehlo.return %w : tensor<i1>
  }) : (tensor<6xf32>) -> tensor<6xf32>
  return %r, %sorted : tensor<4xi1>, tensor<6xf32>
}
"#;

/// Whether region `r` is `region` or nested in it.
fn within(m: &Module, r: RegionId, region: RegionId) -> bool {
    let mut p = Some(r);
    while let Some(x) = p {
        if x == region {
            return true;
        }
        p = m.region(x).parent.and_then(|o| m.op(o).parent);
    }
    false
}

/// Values used by ops of `region` (at any depth) that are defined outside `region`.
fn captures(m: &Module, region: RegionId) -> usize {
    let mut n = 0;
    m.walk_region(region, &mut |op| {
        for &v in &m.op(op).operands {
            let home = match m.value(v).def {
                ValueDef::Result(d, _) => m.op(d).parent,
                ValueDef::RegionArg(r, _) => Some(r),
            };
            if !home.is_some_and(|r| within(m, r, region)) {
                n += 1;
            }
        }
    });
    n
}

fn inputs() -> Vec<Tensor> {
    let x: Vec<i64> = (0..36).collect();
    // Row 1 and row 3 have one equal element; rows 0 and 2 none.
    let y: Vec<i64> = (0..36)
        .map(|i| if i == 13 || i == 30 { i } else { -1 })
        .collect();
    let ty = neuronc_ir::ElemType::Int(64);
    vec![
        Tensor::from_i64(ty, &[4, 9], &x).unwrap(),
        Tensor::from_i64(ty, &[4, 9], &y).unwrap(),
        Tensor::from_f32(&[6], &[3.0, -1.0, 0.0, 2.5, -4.0, 0.5]).unwrap(),
    ]
}

#[test]
fn constants_are_sunk_and_results_kept() {
    let m = parse_module(SRC).unwrap();
    let want = run_function(&m, "main", inputs(), &RunOptions::default()).unwrap();
    assert_eq!(want[0].as_i64().unwrap(), &[0, 1, 0, 1], "any(dim) by hand");

    let mut opt = m.clone();
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    run_pipeline(
        &mut opt,
        &Pipeline::parse("sink-constants").unwrap(),
        &mut ctx,
    )
    .unwrap();
    let body = opt.func("main").unwrap().body;
    for &op in &opt.region(body).ops {
        for &r in &opt.op(op).regions {
            assert_eq!(captures(&opt, r), 0, "a region still captures a value");
        }
    }
    let got = run_function(&opt, "main", inputs(), &RunOptions::default()).unwrap();
    assert_eq!(got, want);

    // The whole -O2 pipeline (which outlines fused kernels) keeps the results too.
    let mut o2 = m.clone();
    run_pipeline(&mut o2, &Pipeline::preset(2).unwrap(), &mut ctx).unwrap();
    let got = run_function(&o2, "main", inputs(), &RunOptions::default()).unwrap();
    assert_eq!(got, want);
}
