//! Parse errors: exact messages and positions (line:column of the offending token).

mod common;

use common::parse_err as err;

fn func(body: &str) -> String {
    format!("func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {{\n{body}\n}}\n")
}

#[test]
fn undefined_value() {
    let src =
        func("  %0 = stablehlo.add %arg0, %nope : tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(err(&src), (2, 29, "use of undefined value '%nope'".into()));
}

#[test]
fn operand_type_mismatch() {
    let src =
        func("  %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>\n  return %0 : tensor<3xf32>");
    assert_eq!(
        err(&src),
        (
            2,
            22,
            "use of value '%arg0' expects different type than prior uses: 'tensor<3xf32>' vs 'tensor<2xf32>'"
                .into()
        )
    );
}

#[test]
fn dynamic_unranked_quantized_types() {
    let d = "func.func @f(%a: tensor<?x4xf32>) {\n  return\n}\n";
    assert_eq!(
        err(d),
        (
            1,
            25,
            "dynamic dimensions are unsupported (static shapes only; a '?' needs a \
             #stablehlo.bounds encoding)"
                .into()
        )
    );
    let u = "func.func @f(%a: tensor<*xf32>) {\n  return\n}\n";
    assert_eq!(err(u), (1, 25, "unranked tensors are unsupported".into()));
    let q = "func.func @f(%a: tensor<4x!quant.uniform<i8:f32, 1.0>>) {\n  return\n}\n";
    assert_eq!(
        err(q),
        (1, 27, "quantized element types are unsupported".into())
    );
}

#[test]
fn huge_tensor_is_an_error_not_an_allocation() {
    let src = "func.func @f(%a: tensor<99999999999x99999999999xf32>) {\n  return\n}\n";
    let (l, c, m) = err(src);
    assert_eq!((l, c), (1, 18));
    assert!(
        m.starts_with("tensor type has more than 1099511627776 elements"),
        "{m}"
    );
    // A dense constant claiming a huge splat is fine (splat), but a literal list must match.
    let lit = func("  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<3xf32>\n  return %arg0 : tensor<2xf32>");
    assert_eq!(
        err(&lit),
        (
            2,
            33,
            "dense literal has 2 elements in a dimension of size 3".into()
        )
    );
    let hex = func("  %0 = stablehlo.constant dense<\"0x0000803F00000040\"> : tensor<1000000000xf32>\n  return %arg0 : tensor<2xf32>");
    assert_eq!(
        err(&hex),
        (
            2,
            33,
            "hex buffer of 8 bytes does not fit 1000000000 elements of f32".into()
        )
    );
}

#[test]
fn unknown_op_and_missing_custom_syntax() {
    let src =
        func("  %0 = stablehlo.frobnicate %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(
        err(&src),
        (2, 8, "unknown operation 'stablehlo.frobnicate'".into())
    );
    let g = func("  %0 = \"stablehlo.frobnicate\"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(
        err(&g),
        (2, 8, "unknown operation 'stablehlo.frobnicate'".into())
    );
    let s = func("  %0 = stablehlo.sort %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(
        err(&s),
        (
            2,
            8,
            "'stablehlo.sort' has no custom syntax; write it in the generic form \"stablehlo.sort\"(...)"
                .into()
        )
    );
}

#[test]
fn punctuation_diagnostics_say_what_was_expected() {
    let src = func("  %0 = stablehlo.transpose %arg0, dims = [0} : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(
        err(&src),
        (
            2,
            44,
            "expected ',' or ']' in dimension list, found '}'".into()
        )
    );
    let src = func("  %0 = stablehlo.add %arg0, %arg0 tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(
        err(&src),
        (
            2,
            35,
            "expected ':' and the op's types, found 'tensor'".into()
        )
    );
    let src = "func.func @main(%arg0 tensor<2xf32>) {\n}\n";
    assert_eq!(
        err(src),
        (
            1,
            23,
            "expected ':' after argument name, found 'tensor'".into()
        )
    );
}

#[test]
fn literal_ranges_and_ssa_rules() {
    let src =
        func("  %0 = stablehlo.constant dense<300> : tensor<i8>\n  return %arg0 : tensor<2xf32>");
    assert_eq!(
        err(&src),
        (2, 33, "integer literal '300' out of range for i8".into())
    );
    let src = func("  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n  return %0 : tensor<2xf32>");
    assert_eq!(err(&src), (3, 3, "redefinition of SSA value '%0'".into()));
    let src =
        func("  %0:2 = stablehlo.negate %arg0 : tensor<2xf32>\n  return %0#0 : tensor<2xf32>");
    assert_eq!(
        err(&src),
        (
            2,
            10,
            "operation defines 1 results but was provided 2 to bind".into()
        )
    );
    let src = func("  %0 = stablehlo.negate %arg0 : tensor<2xf32>\n  return %0#1 : tensor<2xf32>");
    assert_eq!(
        err(&src),
        (
            3,
            10,
            "result number 1 out of range: '%0' has 1 result(s)".into()
        )
    );
}

#[test]
fn nesting_depth_is_bounded() {
    let deep = format!(
        "func.func @f(%a: tensor<2xf32>) attributes {{x = {}{}}} {{\n  return\n}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (_, _, m) = err(&deep);
    assert_eq!(m, "nesting too deep");
    let mut regions = String::from("func.func @f(%p: tensor<i1>) {\n");
    for _ in 0..5000 {
        regions.push_str("\"stablehlo.if\"(%p) ({\n");
    }
    let (_, _, m) = err(&regions);
    assert_eq!(m, "nesting too deep");
    let types = format!(
        "func.func @f(%a: {}f32{}) {{\n}}\n",
        "tuple<".repeat(100_000),
        ">".repeat(100_000)
    );
    assert_eq!(err(&types).2, "nesting too deep");
    let cplx = format!(
        "func.func @f(%a: tensor<{}f32{}>) {{\n}}\n",
        "complex<".repeat(100_000),
        ">".repeat(100_000)
    );
    assert_eq!(err(&cplx).2, "complex element type must be f32 or f64");
}

#[test]
fn unterminated_inputs() {
    let src = "func.func @main(%arg0: tensor<2xf32>) {\n  return\n";
    assert_eq!(err(src), (1, 39, "unterminated region '{'".into()));
    let src = "func.func @main(%arg0: tensor<2xf32>) {\n  %0 = \"stablehlo.negate\"(%arg0";
    let (l, c, m) = err(src);
    assert_eq!((l, c), (2, 32));
    assert_eq!(m, "expected ',' or ')' in operand list, found end of input");
}
