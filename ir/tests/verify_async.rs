//! `!stablehlo.future<...>` types and `async_start` / `async_done` (spec: docs/spec.md
//! #async_start, #async_done, FutureType): a body of exactly one collective or slice op and
//! a return (C1, C2), arguments mirroring the operands (C3), a future of the body's
//! returned types (C4), and `async_done` unwrapping it (C1).

mod verify_util;

use neuronc_ir::{parse_module, print_module, PrintOptions, Type};
use verify_util::{fails, ok};

/// `async_start` over `body` (block args `%b: tensor<4x4xf32>`), then `async_done`.
fn start_done(body: &str, future: &str, done_ty: &str) -> String {
    format!(
        "func.func @main(%x: tensor<4x4xf32>) -> {done_ty} {{
  %f = \"stablehlo.async_start\"(%x) ({{
  ^bb0(%b: tensor<4x4xf32>):
{body}
  }}) : (tensor<4x4xf32>) -> {future}
  %r = \"stablehlo.async_done\"(%f) : ({future}) -> {done_ty}
  func.return %r : {done_ty}
}}
"
    )
}

const ALL_REDUCE: &str = "    %s = \"stablehlo.all_reduce\"(%b) ({
    ^bb1(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    stablehlo.return %s : tensor<4x4xf32>";

const F44: &str = "!stablehlo.future<tensor<4x4xf32>>";

#[test]
fn future_types_parse_and_print() {
    let src = "func.func private @f() -> !stablehlo.future<tensor<2x3xf32>, tensor<4xi32>>\n";
    let m = parse_module(src).unwrap();
    let t = m.func("f").unwrap().result_types[0];
    let Type::Future(elems) = m.ty(t) else {
        panic!("not a future: {:?}", m.ty(t));
    };
    assert_eq!(elems.len(), 2);
    assert_eq!(
        m.types.display(t),
        "!stablehlo.future<tensor<2x3xf32>, tensor<4xi32>>"
    );
    let text = print_module(&m, &PrintOptions::default());
    assert!(text.contains("-> !stablehlo.future<tensor<2x3xf32>, tensor<4xi32>>"));
    // Elements must be tensors (FutureElementTypes ::= TensorType {',' TensorType}).
    for bad in [
        "!stablehlo.future<f32>",
        "!stablehlo.future<tensor<f32>, i32>",
        "!stablehlo.future<>",
    ] {
        let e = parse_module(&format!("func.func private @f() -> {bad}\n")).unwrap_err();
        assert!(e.to_string().contains("ranked tensor"), "{bad}: {e}");
    }
}

#[test]
fn start_and_done_accept_the_spec_forms() {
    ok(&start_done(ALL_REDUCE, F44, "tensor<4x4xf32>"));
    // A slice op is allowed too (C2).
    ok(&start_done(
        "    %s = stablehlo.slice %b [0:2, 0:4] : (tensor<4x4xf32>) -> tensor<2x4xf32>
    stablehlo.return %s : tensor<2x4xf32>",
        "!stablehlo.future<tensor<2x4xf32>>",
        "tensor<2x4xf32>",
    ));
}

#[test]
fn start_rejects_bad_bodies() {
    // C2: not a collective or slice.
    fails(
        &start_done(
            "    %s = stablehlo.add %b, %b : tensor<4x4xf32>
    stablehlo.return %s : tensor<4x4xf32>",
            F44,
            "tensor<4x4xf32>",
        ),
        &["must contain a collective or slice operation"],
    );
    // C1: two ops and a return.
    fails(
        &start_done(
            "    %n = stablehlo.negate %b : tensor<4x4xf32>
    %s = stablehlo.slice %n [0:4, 0:4] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    stablehlo.return %s : tensor<4x4xf32>",
            F44,
            "tensor<4x4xf32>",
        ),
        &["exactly one operation and a return"],
    );
    // C4: the future must hold the body's returned types.
    fails(
        &start_done(
            ALL_REDUCE,
            "!stablehlo.future<tensor<4x4xi32>>",
            "tensor<4x4xi32>",
        ),
        &["expects the result type !stablehlo.future<tensor<4x4xf32>>"],
    );
}

#[test]
fn start_arguments_mirror_operands() {
    // C3: argument count and types.
    let two_args = "func.func @main(%x: tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>> {
  %f = \"stablehlo.async_start\"(%x) ({
  ^bb0(%b: tensor<4x4xf32>, %c: tensor<4x4xf32>):
    %s = stablehlo.slice %b [0:4, 0:4] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    stablehlo.return %s : tensor<4x4xf32>
  }) : (tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>>
  func.return %f : !stablehlo.future<tensor<4x4xf32>>
}
";
    fails(
        two_args,
        &["number of operands (1) must match number of region arguments (2)"],
    );
    let wrong_type = "func.func @main(%x: tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xi32>> {
  %f = \"stablehlo.async_start\"(%x) ({
  ^bb0(%b: tensor<4x4xi32>):
    %s = stablehlo.slice %b [0:4, 0:4] : (tensor<4x4xi32>) -> tensor<4x4xi32>
    stablehlo.return %s : tensor<4x4xi32>
  }) : (tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xi32>>
  func.return %f : !stablehlo.future<tensor<4x4xi32>>
}
";
    fails(
        wrong_type,
        &["operand type tensor<4x4xf32> at index 0 must match region argument type tensor<4x4xi32>"],
    );
}

#[test]
fn done_unwraps_the_future_and_region_count_is_one() {
    fails(
        &start_done(ALL_REDUCE, F44, "tensor<4x4xi32>"),
        &["expects the future's element types (tensor<4x4xf32>) as results, but got (tensor<4x4xi32>)"],
    );
    fails(
        "func.func @main(%x: tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>> {
  %f = \"stablehlo.async_start\"(%x) : (tensor<4x4xf32>) -> !stablehlo.future<tensor<4x4xf32>>
  func.return %f : !stablehlo.future<tensor<4x4xf32>>
}
",
        &["expects 1 regions, but got 0"],
    );
    fails(
        "func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = \"stablehlo.async_done\"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
",
        &["expects a !stablehlo.future operand"],
    );
}
