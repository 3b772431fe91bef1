//! Verifier rules of reduce, reduce_window, select_and_scatter, sort, map and batch_norm.
//! The reduce_window shape is the one jax/XLA inferred for
//! `lax.reduce_window(x, 0., lax.add, (2,3), (2,1), ((1,0),(2,2)), base_dilation=(2,1),
//! window_dilation=(1,2))` on a 5x7 input: tensor<5x7xf32>.
mod verify_util;
use verify_util::{fails, func, ok};

const ADD_BODY: &str = r#"({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  })"#;

fn reduce(input: &str, dims: &str, res: &str) -> String {
    func(&format!("%a: {input}, %z: tensor<f32>"), res, &format!(
        "%0 = \"stablehlo.reduce\"(%a, %z) {ADD_BODY} {{dimensions = array<i64: {dims}>}} : ({input}, tensor<f32>) -> {res}\nfunc.return %0 : {res}"))
}

#[test]
fn reduce_rules() {
    ok(&reduce("tensor<2x3x4xf32>", "0, 2", "tensor<3xf32>"));
    fails(&reduce("tensor<2x3x4xf32>", "0, 2", "tensor<2xf32>"),
        &["expects result type tensor<3xf32> (the inputs without the reduced dimensions), but got tensor<2xf32> [constraint C7 of stablehlo.reduce]"]);
    fails(
        &reduce("tensor<2x3x4xf32>", "0, 0", "tensor<3x4xf32>"),
        &["expects dimensions to be unique, but 0 repeats [constraint C5"],
    );
    fails(
        &reduce("tensor<2x3x4xf32>", "3", "tensor<2x3x4xf32>"),
        &["expects dimensions to be in [0, 3), but got 3 [constraint C4"],
    );
    // A body whose accumulator type does not match the input element type.
    fails(&func("%a: tensor<4xf32>, %z: tensor<f32>", "tensor<f32>", r#"%0 = "stablehlo.reduce"(%a, %z) ({
      ^bb0(%x: tensor<i32>, %y: tensor<i32>):
        %s = stablehlo.add %x, %y : tensor<i32>
        stablehlo.return %s : tensor<i32>
      }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      func.return %0 : tensor<f32>"#),
        &["expects the body to have type (tensor<f32>, tensor<f32>) -> (tensor<f32>) (or promoted element types), but it has type (tensor<i32>, tensor<i32>) -> (tensor<i32>) [constraint C6"]);
}

#[test]
fn reduce_window_shape_matches_jax() {
    let rw = |res: &str, strides: &str| {
        func("%a: tensor<5x7xf32>, %z: tensor<f32>", res, &format!(
        "%0 = \"stablehlo.reduce_window\"(%a, %z) {ADD_BODY} {{base_dilations = array<i64: 2, 1>, padding = dense<[[1, 0], [2, 2]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 2>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: {strides}>}} : (tensor<5x7xf32>, tensor<f32>) -> {res}\nfunc.return %0 : {res}"))
    };
    ok(&rw("tensor<5x7xf32>", "2, 1"));
    fails(&rw("tensor<9x7xf32>", "2, 1"), &["expects result type tensor<5x7xf32> (the number of windows in each dimension), but got tensor<9x7xf32> [constraint C15"]);
    fails(&rw("tensor<5x7xf32>", "0, 1"), &["expects window_strides to be positive, but got 0 [constraint C7 of stablehlo.reduce_window]"]);
}

#[test]
fn select_and_scatter_rules() {
    let sas = |src: &str| {
        func(
            &format!("%a: tensor<4x6xf32>, %s: {src}, %z: tensor<f32>"),
            "tensor<4x6xf32>",
            &format!(
                r#"%0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({{
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }}, {{
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %t = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %t : tensor<f32>
      }}) {{window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 3>}} : (tensor<4x6xf32>, {src}, tensor<f32>) -> tensor<4x6xf32>
      func.return %0 : tensor<4x6xf32>"#
            ),
        )
    };
    // (4 - 2) / 2 + 1 = 2 and (6 - 3) / 3 + 1 = 2 windows
    ok(&sas("tensor<2x2xf32>"));
    fails(&sas("tensor<2x3xf32>"), &["expects source of shape [2, 2] (the number of windows), but got tensor<2x3xf32> [constraint C2"]);
}

#[test]
fn sort_and_map() {
    let sort = |b: &str, cmp_ty: &str| {
        func(
            &format!("%a: tensor<3x4xf32>, %b: {b}"),
            &format!("tensor<3x4xf32>, {b}"),
            &format!(
                r#"%0:2 = "stablehlo.sort"(%a, %b) ({{
      ^bb0(%x: tensor<f32>, %y: tensor<f32>, %p: {cmp_ty}, %q: {cmp_ty}):
        %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }}) {{dimension = 1 : i64, is_stable = true}} : (tensor<3x4xf32>, {b}) -> (tensor<3x4xf32>, {b})
      func.return %0#0, %0#1 : tensor<3x4xf32>, {b}"#
            ),
        )
    };
    ok(&sort("tensor<3x4xi32>", "tensor<i32>"));
    fails(&sort("tensor<3x4xi32>", "tensor<f32>"), &["expects comparator to have type (tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>) -> tensor<i1>"]);
    fails(&sort("tensor<3x5xi32>", "tensor<i32>"), &["requires all inputs to have the same shape, but input #1 is tensor<3x5xi32> and input #0 is tensor<3x4xf32> [constraint C3"]);
    let map = |dims: &str| {
        func(
            "%a: tensor<4xf32>",
            "tensor<4xf32>",
            &format!(
                r#"%0 = "stablehlo.map"(%a) ({{
      ^bb0(%x: tensor<f32>):
        %n = stablehlo.negate %x : tensor<f32>
        stablehlo.return %n : tensor<f32>
      }}) {{dimensions = array<i64: {dims}>}} : (tensor<4xf32>) -> tensor<4xf32>
      func.return %0 : tensor<4xf32>"#
            ),
        )
    };
    ok(&map("0"));
    fails(
        &map("1"),
        &["expects dimensions to be [0, ..., 0], but got [1] [constraint C3 of stablehlo.map]"],
    );
}

#[test]
fn batch_norm_rules() {
    let bn = |scale: &str| {
        func(
            &format!("%x: tensor<2x3x4xf32>, %s: {scale}, %o: tensor<3xf32>"),
            "tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>",
            &format!(
                r#"%0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {{epsilon = 1.0e-3 : f32, feature_index = 1 : i64}} : (tensor<2x3x4xf32>, {scale}, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
        func.return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>"#
            ),
        )
    };
    ok(&bn("tensor<3xf32>"));
    fails(
        &bn("tensor<4xf32>"),
        &["expects scale to be 1-D of size 3 (the feature dimension), but got tensor<4xf32>"],
    );
}
