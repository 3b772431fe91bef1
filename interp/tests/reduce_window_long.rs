//! `reduce_window` over long cumulative windows (what jax and torch_xla lower `cumsum`,
//! `cumprod`, `cummax`, ... to: window `n` along the axis, low padding `n - 1`) and small
//! strided / dilated windows.
//!
//! Oracles: XLA:CPU folds every window from the init value, sequentially, in row-major
//! order of the window positions, rounding every step to the element type (padding and
//! base-dilation holes read as the init value); `corpus_semantics.rs`
//! (`reduce_window_accumulates_in_order_in_the_element_type`) checks that order against
//! XLA:CPU outputs. For a cumulative window, output `o` therefore folds `n - 1 - o`
//! copies of the init value and then elements `0..=o` in order, which the tests below
//! compute with plain loops written here (not with the interpreter's code). The small
//! cases are computed by hand from those rules.

use half::bf16;
use neuronc_interp::{run_function, Data, RunOptions, Tensor};
use neuronc_ir::ElemType;

fn run(src: &str, inputs: Vec<Tensor>) -> Vec<Tensor> {
    let m = neuronc_ir::parse_module(src).expect("test program parses");
    neuronc_ir::verify_module(&m).expect("test program verifies");
    run_function(&m, "main", inputs, &RunOptions::default()).expect("program runs")
}

fn f32s(t: &Tensor) -> Vec<f32> {
    match t.data() {
        Data::F32(v) => v.clone(),
        other => panic!("expected f32-class storage, got {other:?}"),
    }
}

fn ints(t: &Tensor) -> Vec<i64> {
    match t.data() {
        Data::Int(v) => v.clone(),
        other => panic!("expected integer storage, got {other:?}"),
    }
}

/// Deterministic values with magnitudes from 1e-3 to 1e4 and both signs, so that f32
/// prefix sums depend on the summation order.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let mant = (s >> 40) as f32 / (1u64 << 24) as f32 + 0.5;
            let scale = [1e-3f32, 0.1, 7.0, 1e4][(s & 3) as usize];
            if s & 4 == 0 {
                mant * scale
            } else {
                -mant * scale
            }
        })
        .collect()
}

/// A `reduce_window` of `tensor<{shape}x{ty}>` with body `body` and init `init`, whose
/// window attributes are `attrs`, returning `tensor<{out}x{ty}>`.
fn program(shape: &str, out: &str, ty: &str, init: &str, attrs: &str, body: &str) -> String {
    format!(
        r#"func.func @main(%x: tensor<{shape}x{ty}>) -> tensor<{out}x{ty}> {{
  %z = stablehlo.constant dense<{init}> : tensor<{ty}>
  %r = "stablehlo.reduce_window"(%x, %z) <{{{attrs}}}> ({{
  ^bb0(%a: tensor<{ty}>, %b: tensor<{ty}>):
    {body}
  }}) : (tensor<{shape}x{ty}>, tensor<{ty}>) -> tensor<{out}x{ty}>
  return %r : tensor<{out}x{ty}>
}}"#
    )
}

/// jax's `cumsum` along the last axis of a `rows x n` tensor (padding `[[0, 0], [lo, hi]]`).
fn cum_attrs(n: usize, lo: usize, hi: usize) -> String {
    format!(
        "padding = dense<[[0, 0], [{lo}, {hi}]]> : tensor<2x2xi64>, \
         window_dimensions = array<i64: 1, {n}>, window_strides = array<i64: 1, 1>"
    )
}

const ADD: &str = "%s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>";

/// Sequential f32 prefix sums of each row of `n` elements (XLA:CPU's fold, see the module docs).
fn prefix_sums(x: &[f32], n: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(n) {
        let mut s = 0.0f32;
        for &v in row {
            s += v;
            out.push(s);
        }
    }
    out
}

#[test]
fn long_f32_cumsum_matches_a_sequential_prefix_sum() {
    let (rows, n) = (3, 8192);
    let x = values(rows * n, 7);
    let src = program(
        &format!("{rows}x{n}"),
        &format!("{rows}x{n}"),
        "f32",
        "0.0",
        &cum_attrs(n, n - 1, 0),
        ADD,
    );
    let input = Tensor::from_f32(&[rows as i64, n as i64], &x).unwrap();
    let got = f32s(&run(&src, vec![input])[0]);
    let want = prefix_sums(&x, n);
    // The data is order-sensitive: an f64 accumulation differs from the f32 one.
    let mut wide = 0.0f64;
    let differs = x[..n].iter().zip(&want).any(|(&v, &w)| {
        wide += v as f64;
        wide as f32 != w
    });
    assert!(differs, "test data should make the summation order visible");
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));
}

/// Reverse cumsum (padding on the high side): output `o` folds elements `o..n` in order,
/// then `o` padding zeros. Windows start at different elements here, so no running fold
/// applies; this exercises the general window walk on long windows.
#[test]
fn long_reverse_cumsum_matches_sequential_suffix_sums() {
    let n = 2048;
    let x = values(n, 11);
    let src = program(
        &format!("1x{n}"),
        &format!("1x{n}"),
        "f32",
        "0.0",
        &cum_attrs(n, 0, n - 1),
        ADD,
    );
    let got = f32s(&run(&src, vec![Tensor::from_f32(&[1, n as i64], &x).unwrap()])[0]);
    let want: Vec<f32> = (0..n)
        .map(|o| {
            let s = x[o..].iter().fold(0.0f32, |s, &v| s + v);
            (0..o).fold(s, |s, _| s + 0.0)
        })
        .collect();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));
}

/// With init 1.0 the padding steps change the accumulator (`1 + 1 = 2`): output `o`
/// starts from `n - o` (exact here) and then adds elements `0..=o`.
#[test]
fn cumulative_window_with_a_non_neutral_init_counts_the_padding() {
    let n = 300;
    let x = values(n, 3);
    let src = program(
        &format!("1x{n}"),
        &format!("1x{n}"),
        "f32",
        "1.0",
        &cum_attrs(n, n - 1, 0),
        ADD,
    );
    let got = f32s(&run(&src, vec![Tensor::from_f32(&[1, n as i64], &x).unwrap()])[0]);
    let want: Vec<f32> = (0..n)
        .map(|o| x[..=o].iter().fold((n - o) as f32, |s, &v| s + v))
        .collect();
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));
}

/// A bf16 cumsum rounds to bf16 after every step.
#[test]
fn long_bf16_cumsum_rounds_every_step() {
    let n = 1000;
    let x: Vec<f32> = values(n, 5)
        .iter()
        .map(|&v| bf16::from_f32(v / 100.0).to_f32())
        .collect();
    let src = program(
        &format!("1x{n}"),
        &format!("1x{n}"),
        "bf16",
        "0.0",
        &cum_attrs(n, n - 1, 0),
        "%s = stablehlo.add %a, %b : tensor<bf16>\n    stablehlo.return %s : tensor<bf16>",
    );
    let xs: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let input = Tensor::from_f64_as(ElemType::BF16, &[1, n as i64], &xs).unwrap();
    let got = f32s(&run(&src, vec![input])[0]);
    let mut s = 0.0f32;
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            s = bf16::from_f32(s + v).to_f32();
            s
        })
        .collect();
    assert_eq!(got, want);
}

/// A variadic (value, index) running argmax with a generic body: the first maximum wins.
#[test]
fn long_variadic_cumulative_argmax() {
    let n = 1500;
    let x = values(n, 9);
    let idx: Vec<i64> = (0..n as i64).collect();
    let src = format!(
        r#"func.func @main(%x: tensor<1x{n}xf32>, %i: tensor<1x{n}xi32>) -> (tensor<1x{n}xf32>, tensor<1x{n}xi32>) {{
  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = "stablehlo.reduce_window"(%x, %i, %z, %zi) <{{{attrs}}}> ({{
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    %c = stablehlo.compare GT, %b, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %c, %b, %a : tensor<i1>, tensor<f32>
    %j = stablehlo.select %c, %bi, %ai : tensor<i1>, tensor<i32>
    stablehlo.return %v, %j : tensor<f32>, tensor<i32>
  }}) : (tensor<1x{n}xf32>, tensor<1x{n}xi32>, tensor<f32>, tensor<i32>) -> (tensor<1x{n}xf32>, tensor<1x{n}xi32>)
  return %r#0, %r#1 : tensor<1x{n}xf32>, tensor<1x{n}xi32>
}}"#,
        attrs = cum_attrs(n, n - 1, 0)
    );
    let inputs = vec![
        Tensor::from_f32(&[1, n as i64], &x).unwrap(),
        Tensor::from_i64(ElemType::Int(32), &[1, n as i64], &idx).unwrap(),
    ];
    let out = run(&src, inputs);
    let (mut best, mut at) = (f32::NEG_INFINITY, 0i64);
    let (mut wv, mut wi) = (Vec::new(), Vec::new());
    for (j, &v) in x.iter().enumerate() {
        if v > best {
            (best, at) = (v, j as i64);
        }
        wv.push(best);
        wi.push(at);
    }
    assert_eq!(f32s(&out[0]), wv);
    assert_eq!(ints(&out[1]), wi);
}

/// `acc' = 2 * acc + b` makes the result record the fold order.
const HORNER: &str = "%t = stablehlo.constant dense<2.0> : tensor<f32>
    %m = stablehlo.multiply %a, %t : tensor<f32>
    %s = stablehlo.add %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>";

/// Input `[1, 2, 3, 4, 5]`, base dilation 2, padding `[2, 0]`: positions
/// `p p 1 h 2 h 3 h 4 h 5` (`p` padding, `h` hole, both the init 0.5). Window 3 with
/// window dilation 3 and stride 2 reads positions `{0,3,6}`, `{2,5,8}`, `{4,7,10}`:
/// `(p,h,3)`, `(1,h,4)`, `(2,h,5)`. Folding `2 * acc + e` from 0.5 gives
/// `8*0.5 + 4*e0 + 2*e1 + e2`: 4+2+1+3 = 10, 4+4+1+4 = 13, 4+8+1+5 = 18.
#[test]
fn strided_dilated_window_folds_padding_and_holes_in_order() {
    let attrs = "base_dilations = array<i64: 2>, padding = dense<[[2, 0]]> : tensor<1x2xi64>, \
                 window_dilations = array<i64: 3>, window_dimensions = array<i64: 3>, \
                 window_strides = array<i64: 2>";
    let src = program("5", "3", "f32", "0.5", attrs, HORNER);
    let x = Tensor::from_f32(&[5], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!(f32s(&run(&src, vec![x])[0]), vec![10.0, 13.0, 18.0]);
}

/// A 2x2 window over `[[1, 2, 3], [4, 5, 6]]` folds its elements in row-major order:
/// `1, 2, 4, 5` gives 1, 4, 12, 29; `2, 3, 5, 6` gives 2, 7, 19, 44.
#[test]
fn two_dimensional_window_folds_in_row_major_order() {
    let attrs = "window_dimensions = array<i64: 2, 2>";
    let src = program("2x3", "1x2", "f32", "0.0", attrs, HORNER);
    let x = Tensor::from_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(f32s(&run(&src, vec![x])[0]), vec![29.0, 44.0]);
}
