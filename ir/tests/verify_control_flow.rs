//! Verifier rules of while/if/case, func.call/func.return, and the structural rules:
//! SSA dominance, terminators, operand/result counts, symbol references.
mod verify_util;
use verify_util::{diagnostics, fails, func, ok};

fn while_loop(body_ret: &str) -> String {
    func(
        "%n: tensor<i32>",
        "tensor<i32>",
        &format!(
            r#"%0 = stablehlo.while(%i = %n) : tensor<i32>
      cond {{
        %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }} do {{
        %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
        stablehlo.return {body_ret}
      }}
      func.return %0 : tensor<i32>"#
        ),
    )
}

#[test]
fn while_rules() {
    ok(&while_loop("%i : tensor<i32>"));
    fails(&while_loop("%f : tensor<f32>"),
        &["expects body to have type (tensor<i32>) -> (tensor<i32>), but it has type (tensor<i32>) -> (tensor<f32>) [constraint C2 of stablehlo.while]"]);
}

#[test]
fn if_and_case_rules() {
    let if_op = |t: &str, e: &str| {
        func(
            "%p: tensor<i1>, %a: tensor<f32>, %b: tensor<2xf32>",
            "tensor<f32>",
            &format!(
                r#"%0 = "stablehlo.if"(%p) ({{
        stablehlo.return {t}
      }}, {{
        stablehlo.return {e}
      }}) : (tensor<i1>) -> tensor<f32>
      func.return %0 : tensor<f32>"#
            ),
        )
    };
    ok(&if_op("%a : tensor<f32>", "%a : tensor<f32>"));
    fails(&if_op("%a : tensor<f32>", "%b : tensor<2xf32>"),
        &["requires all branches to return the same types, but branch #0 returns (tensor<f32>) and branch #1 returns (tensor<2xf32>) [constraint C2 of stablehlo.if]"]);
    fails(
        &func(
            "%p: tensor<i32>, %a: tensor<f32>",
            "tensor<f32>",
            r#"%0 = "stablehlo.if"(%p) ({
        stablehlo.return %a : tensor<f32>
      }, {
        stablehlo.return %a : tensor<f32>
      }) : (tensor<i32>) -> tensor<f32>
      func.return %0 : tensor<f32>"#,
        ),
        &["expects pred to be tensor<i1>, but got tensor<i32>"],
    );
    ok(&func(
        "%k: tensor<i32>, %a: tensor<f32>",
        "tensor<f32>",
        r#"%0 = "stablehlo.case"(%k) ({
        stablehlo.return %a : tensor<f32>
      }, {
        %n = stablehlo.negate %a : tensor<f32>
        stablehlo.return %n : tensor<f32>
      }) : (tensor<i32>) -> tensor<f32>
      func.return %0 : tensor<f32>"#,
    ));
}

#[test]
fn func_return_and_call() {
    fails(&func("%a: tensor<2xf32>", "tensor<3xf32>", "func.return %a : tensor<2xf32>"),
        &["'func.return' op requires operand types to match the result types of '@main' (tensor<3xf32>), but got (tensor<2xf32>)"]);
    let prog = |callee: &str, arg_ty: &str| {
        format!(
            r#"
      func.func private @twice(%x: tensor<2xf32>) -> tensor<2xf32> {{
        %y = stablehlo.add %x, %x : tensor<2xf32>
        func.return %y : tensor<2xf32>
      }}
      func.func @main(%a: {arg_ty}) -> tensor<2xf32> {{
        %r = func.call @{callee}(%a) : ({arg_ty}) -> tensor<2xf32>
        func.return %r : tensor<2xf32>
      }}"#
        )
    };
    ok(&prog("twice", "tensor<2xf32>"));
    fails(
        &prog("thrice", "tensor<2xf32>"),
        &["'func.call' op '@thrice' does not reference a valid function"],
    );
    fails(&prog("twice", "tensor<2xi32>"),
        &["expects the callee '@twice' type (tensor<2xf32>) -> (tensor<2xf32>), but the call has type (tensor<2xi32>) -> (tensor<2xf32>)"]);
}

#[test]
fn enclosing_values_are_visible_in_nested_regions() {
    ok(&func(
        "%p: tensor<i1>, %a: tensor<f32>",
        "tensor<f32>",
        r#"%n = stablehlo.negate %a : tensor<f32>
      %0 = "stablehlo.if"(%p) ({
        stablehlo.return %n : tensor<f32>
      }, {
        stablehlo.return %a : tensor<f32>
      }) : (tensor<i1>) -> tensor<f32>
      func.return %0 : tensor<f32>"#,
    ));
}

#[test]
fn terminators_and_counts() {
    fails(&func("%a: tensor<f32>", "tensor<f32>", "func.return %a : tensor<f32>\n%0 = stablehlo.negate %a : tensor<f32>"),
        &["function body must end with a 'func.return' terminator, but ends with 'stablehlo.negate'", "'func.return' op must be the last operation of its region"]);
    fails(
        &func(
            "%a: tensor<f32>",
            "tensor<f32>",
            r#"%0 = "stablehlo.add"(%a) : (tensor<f32>) -> tensor<f32>
      func.return %0 : tensor<f32>"#,
        ),
        &["'stablehlo.add' op expects 2 operands, but got 1"],
    );
}

#[test]
fn all_errors_are_collected_without_cascades() {
    let src = func(
        "%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %i: tensor<4xi32>",
        "tensor<2x3xf32>",
        r#"%0 = "stablehlo.add"(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
      %1 = stablehlo.transpose %a, dims = [1, 1] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      %2 = stablehlo.floor %i : tensor<4xi32>
      %3 = stablehlo.multiply %0, %0 : tensor<2x3xf32>
      %4 = stablehlo.reshape %3 : (tensor<2x3xf32>) -> tensor<7xf32>
      func.return %3 : tensor<2x3xf32>"#,
    );
    let d = diagnostics(&src);
    assert_eq!(d.len(), 4, "{d:#?}");
    assert!(
        d[0].contains("'stablehlo.add'") && d[1].contains("'stablehlo.transpose'"),
        "{d:#?}"
    );
    assert!(
        d[2].contains("'stablehlo.floor'") && d[3].contains("'stablehlo.reshape'"),
        "{d:#?}"
    );
    // Diagnostics are anchored at the op: the span starts at the op's line.
    let m = neuronc_ir::parse_module(&src).unwrap();
    let e = neuronc_ir::verify_module(&m).unwrap_err();
    let line_of = |b: u32| src[..b as usize].lines().count();
    assert_eq!(line_of(e.0[1].span.start), 3, "transpose is on line 3");
}
