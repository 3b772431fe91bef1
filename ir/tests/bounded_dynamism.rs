//! XLA bounded dynamism (`set_dimension_size` feeding a scatter, torch_xla's
//! `masked_scatter`): the parser lowers it to static ops, and every other form is an
//! error at its source position.

use neuronc_ir::{parse_module, print_module, verify_module, OpKind, PrintOptions};

mod common;

use common::parse_err as err;

/// A 4-element overwrite scatter whose `n` first index rows (of 3) and updates exist:
/// `sds_idx` / `sds_upd` define `%0` / `%1`, `idx_ty` is the indices' type as written.
fn scatter_program(sds_idx: &str, sds_upd: &str, idx_ty: &str) -> String {
    format!(
        "func.func @main(%x: tensor<4xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>, %n: tensor<i32>) -> tensor<4xf32> {{
  %0 = {sds_idx}
  %1 = {sds_upd}
  %2 = \"stablehlo.scatter\"(%x, %0, %1) <{{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }}) : (tensor<4xf32>, {idx_ty}, {UPD_TY}) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}}
"
    )
}

const IDX_TY: &str = "tensor<?x1xi32, #stablehlo.bounds<3, ?>>";
const UPD_TY: &str = "tensor<?xf32, #stablehlo.bounds<3>>";

/// `set_dimension_size` of the indices `%i` along `dim`, to type `ty` (pretty syntax).
fn idx_sds(dim: u32, ty: &str) -> String {
    format!(
        "stablehlo.set_dimension_size %i, %n, dim = {dim} : (tensor<3x1xi32>, tensor<i32>) -> {ty}"
    )
}

/// `set_dimension_size` of the updates `%u` to the runtime size `size` (pretty syntax).
fn upd_sds(size: &str) -> String {
    format!("stablehlo.set_dimension_size %u, {size}, dim = 0 : (tensor<3xf32>, tensor<i32>) -> {UPD_TY}")
}

fn torch_form() -> String {
    // The updates' set_dimension_size in the generic syntax.
    scatter_program(
        &idx_sds(0, IDX_TY),
        &format!("\"stablehlo.set_dimension_size\"(%u, %n) <{{dimension = 0 : i64}}> : (tensor<3xf32>, tensor<i32>) -> {UPD_TY}"),
        IDX_TY,
    )
}

#[test]
fn masked_scatter_lowers_to_static_ops() {
    let m = parse_module(&torch_form()).expect("parses");
    verify_module(&m).expect("verifies");
    let mut kinds = Vec::new();
    m.walk_ops(|op| kinds.push(m.op(op).kind));
    assert!(!kinds.contains(&OpKind::SetDimensionSize), "{kinds:?}");
    // The index rows past `n` are selected away before the scatter.
    let scatter = kinds
        .iter()
        .position(|&k| k == OpKind::Scatter)
        .expect("scatter");
    assert!(kinds[..scatter].contains(&OpKind::Select), "{kinds:?}");
    assert!(kinds[..scatter].contains(&OpKind::Iota), "{kinds:?}");
    let text = print_module(&m, &PrintOptions::default());
    assert!(!text.contains('?'), "{text}");
    let again = parse_module(&text).expect("the static form re-parses");
    verify_module(&again).expect("and verifies");
}

#[test]
fn dynamic_value_outside_a_scatter_is_an_error() {
    let src = "func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
  %1 = stablehlo.negate %0 : tensor<?xf32, #stablehlo.bounds<4>>
  return %x : tensor<4xf32>
}
";
    let (l, c, m) = err(src);
    assert_eq!((l, c), (3, 8));
    assert!(
        m.starts_with("'stablehlo.negate' operand 0 is a bounded dynamic value"),
        "{m}"
    );
}

#[test]
fn bounded_function_argument_is_an_error() {
    let src = "func.func @main(%x: tensor<?xf32, #stablehlo.bounds<4>>) -> tensor<f32> {
  %0 = stablehlo.constant dense<0.0> : tensor<f32>
  return %0 : tensor<f32>
}
";
    let (l, c, m) = err(src);
    assert_eq!((l, c), (1, 21));
    assert!(
        m.starts_with("bounded dynamic type outside set_dimension_size"),
        "{m}"
    );
}

#[test]
fn unbounded_dynamic_dimension_is_an_error() {
    let src = "func.func @main(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {\n  return %x : tensor<2x?xf32>\n}\n";
    let (l, c, m) = err(src);
    assert_eq!((l, c), (1, 30));
    assert!(m.starts_with("dynamic dimensions are unsupported"), "{m}");
}

#[test]
fn malformed_bounds_are_errors() {
    let static_bound =
        "func.func @main(%x: tensor<4xf32, #stablehlo.bounds<4>>) -> tensor<f32> {\n}\n";
    assert!(err(static_bound)
        .2
        .contains("'?' (the dimension is static)"));
    let missing = "func.func @main(%x: tensor<?xf32, #stablehlo.bounds<?>>) -> tensor<f32> {\n}\n";
    assert!(err(missing).2.contains("an integer bound"));
    let sparse = "func.func @main(%x: tensor<4xf32, #sparse>) -> tensor<f32> {\n}\n";
    assert!(err(sparse)
        .2
        .starts_with("tensor encodings other than #stablehlo.bounds"));
}

#[test]
fn result_must_be_dynamic_in_the_named_dimension() {
    let wrong = "tensor<3x?xi32, #stablehlo.bounds<?, 1>>";
    let src = scatter_program(&idx_sds(0, wrong), &upd_sds("%n"), wrong);
    let (l, c, m) = err(&src);
    assert_eq!((l, c), (2, 8));
    assert!(
        m.contains("dynamic ('?' with #stablehlo.bounds) in dimension 0 only"),
        "{m}"
    );
}

#[test]
fn dynamic_index_vector_dimension_is_an_error() {
    let idx = "tensor<3x?xi32, #stablehlo.bounds<?, 1>>";
    let src = scatter_program(&idx_sds(1, idx), &upd_sds("%n"), idx);
    let (l, c, m) = err(&src);
    assert_eq!((l, c), (4, 8));
    assert_eq!(m, "scatter's index vector dimension is dynamic");
}

#[test]
fn scatter_operands_must_share_their_size() {
    let src = scatter_program(&idx_sds(0, IDX_TY), &upd_sds("%x2"), IDX_TY)
        .replace("%n: tensor<i32>)", "%n: tensor<i32>, %x2: tensor<i32>)");
    let (l, c, m) = err(&src);
    assert_eq!((l, c), (4, 8));
    assert!(
        m.contains("disagree on the dynamic dimension or its size"),
        "{m}"
    );
}

#[test]
fn resizing_a_bounded_value_is_named_as_such() {
    // torch_xla with XLA_EXPERIMENTAL=masked_select: masked_scatter of a masked_select.
    let src = "func.func @main(%x: tensor<4xf32>, %n: tensor<i32>, %m: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
  %1 = stablehlo.set_dimension_size %0, %m, dim = 0 : (tensor<?xf32, #stablehlo.bounds<4>>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
  return %x : tensor<4xf32>
}
";
    let (l, c, m) = err(src);
    assert_eq!((l, c), (3, 8));
    assert!(m.contains("of a value that is already bounded"), "{m}");
}
