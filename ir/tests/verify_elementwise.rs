//! Verifier rules of the elementwise family (spec constraints of add, compare, select,
//! clamp, convert, bitcast_convert, real/imag, complex) and CHLO broadcasting.
mod verify_util;
use verify_util::{fails, func, ok};

#[test]
fn binary_same_type() {
    ok(&func(
        "%a: tensor<2x3xf32>, %b: tensor<2x3xf32>",
        "tensor<2x3xf32>",
        "%0 = stablehlo.add %a, %b : tensor<2x3xf32>\nfunc.return %0 : tensor<2x3xf32>",
    ));
    fails(&func("%a: tensor<2x3xf32>, %b: tensor<3x2xf32>", "tensor<2x3xf32>",
        r#"%0 = "stablehlo.add"(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
        func.return %0 : tensor<2x3xf32>"#),
        &["'stablehlo.add' op requires operands and result to have the same type, but operand #1 has type tensor<3x2xf32> and the result has type tensor<2x3xf32> [constraint C1 of stablehlo.add]"]);
}

#[test]
fn element_classes() {
    ok(&func(
        "%a: tensor<4xi32>",
        "tensor<4xi32>",
        "%0 = stablehlo.shift_left %a, %a : tensor<4xi32>\nfunc.return %0 : tensor<4xi32>",
    ));
    fails(
        &func(
            "%a: tensor<4xf32>",
            "tensor<4xf32>",
            "%0 = stablehlo.shift_left %a, %a : tensor<4xf32>\nfunc.return %0 : tensor<4xf32>",
        ),
        &["expects operands of integer element type"],
    );
    for op in ["abs", "sign"] {
        fails(
            &func(
                "%a: tensor<4xui8>",
                "tensor<4xui8>",
                &format!("%0 = stablehlo.{op} %a : tensor<4xui8>\nfunc.return %0 : tensor<4xui8>"),
            ),
            &["expects operands of signed integer or floating-point or complex element type"],
        );
    }
    ok(&func(
        "%a: tensor<4xi8>",
        "tensor<4xi8>",
        "%0 = stablehlo.sign %a : tensor<4xi8>\nfunc.return %0 : tensor<4xi8>",
    ));
    fails(
        &func(
            "%a: tensor<4xi32>",
            "tensor<4xi32>",
            "%0 = stablehlo.floor %a : tensor<4xi32>\nfunc.return %0 : tensor<4xi32>",
        ),
        &["expects operands of floating-point element type"],
    );
}

#[test]
fn abs_of_complex_is_real() {
    ok(&func(
        "%a: tensor<3xcomplex<f32>>",
        "tensor<3xf32>",
        r#"%0 = "stablehlo.abs"(%a) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
        func.return %0 : tensor<3xf32>"#,
    ));
    fails(
        &func(
            "%a: tensor<3xcomplex<f32>>",
            "tensor<3xf64>",
            r#"%0 = "stablehlo.abs"(%a) : (tensor<3xcomplex<f32>>) -> tensor<3xf64>
        func.return %0 : tensor<3xf64>"#,
        ),
        &["expects result type tensor<3xf32> for a complex operand"],
    );
}

#[test]
fn compare_rules() {
    ok(&func("%a: tensor<2xi32>, %b: tensor<2xi32>", "tensor<2xi1>",
        "%0 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>\nfunc.return %0 : tensor<2xi1>"));
    fails(&func("%a: tensor<2xi32>, %b: tensor<2xi32>", "tensor<2xi1>",
        "%0 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>\nfunc.return %0 : tensor<2xi1>"),
        &["compare_type FLOAT does not match element type i32 [constraint C3 of stablehlo.compare]"]);
    fails(&func("%a: tensor<2xi32>, %b: tensor<3xi32>", "tensor<2xi1>",
        "%0 = stablehlo.compare EQ, %a, %b : (tensor<2xi32>, tensor<3xi32>) -> tensor<2xi1>\nfunc.return %0 : tensor<2xi1>"),
        &["requires lhs, rhs and result to have the same shape, but got tensor<2xi32>, tensor<3xi32> and tensor<2xi1> [constraint C2"]);
    fails(&func("%a: tensor<2xcomplex<f32>>", "tensor<2xi1>",
        "%0 = stablehlo.compare LT, %a, %a : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>\nfunc.return %0 : tensor<2xi1>"),
        &["complex operands only support EQ and NE, but got LT"]);
}

#[test]
fn select_and_clamp() {
    ok(&func("%p: tensor<i1>, %a: tensor<2x2xf32>", "tensor<2x2xf32>",
        "%0 = stablehlo.select %p, %a, %a : tensor<i1>, tensor<2x2xf32>\nfunc.return %0 : tensor<2x2xf32>"));
    fails(&func("%p: tensor<2xi1>, %a: tensor<2x2xf32>", "tensor<2x2xf32>",
        r#"%0 = "stablehlo.select"(%p, %a, %a) : (tensor<2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
        func.return %0 : tensor<2x2xf32>"#),
        &["requires pred to be a scalar or have the shape of on_true, but got tensor<2xi1> and tensor<2x2xf32> [constraint C1 of stablehlo.select]"]);
    ok(&func("%lo: tensor<f32>, %a: tensor<4xf32>", "tensor<4xf32>",
        "%0 = stablehlo.clamp %lo, %a, %lo : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\nfunc.return %0 : tensor<4xf32>"));
    fails(
        &func(
            "%lo: tensor<3xf32>, %a: tensor<4xf32>",
            "tensor<4xf32>",
            r#"%0 = "stablehlo.clamp"(%lo, %a, %lo) : (tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
        func.return %0 : tensor<4xf32>"#,
        ),
        &[
            "[constraint C1 of stablehlo.clamp]",
            "[constraint C2 of stablehlo.clamp]",
        ],
    );
}

#[test]
fn conversions() {
    ok(&func("%a: tensor<2x3xf32>", "tensor<2x3xi8>",
        "%0 = stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<2x3xi8>\nfunc.return %0 : tensor<2x3xi8>"));
    fails(&func("%a: tensor<2x3xf32>", "tensor<3x2xi8>",
        "%0 = stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<3x2xi8>\nfunc.return %0 : tensor<3x2xi8>"),
        &["[constraint C1 of stablehlo.convert]"]);
    // f32 -> 4 x i8 adds a trailing dimension of 4 (32 / 8).
    ok(&func("%a: tensor<2xf32>", "tensor<2x4xi8>",
        "%0 = stablehlo.bitcast_convert %a : (tensor<2xf32>) -> tensor<2x4xi8>\nfunc.return %0 : tensor<2x4xi8>"));
    fails(&func("%a: tensor<2xf32>", "tensor<2x2xi8>",
        "%0 = stablehlo.bitcast_convert %a : (tensor<2xf32>) -> tensor<2x2xi8>\nfunc.return %0 : tensor<2x2xi8>"),
        &["cannot bitcast tensor<2xf32> to tensor<2x2xi8>"]);
    ok(&func("%a: tensor<2xf64>", "tensor<2xcomplex<f64>>",
        "%0 = stablehlo.complex %a, %a : tensor<2xcomplex<f64>>\nfunc.return %0 : tensor<2xcomplex<f64>>"));
    fails(
        &func(
            "%a: tensor<2xcomplex<f64>>",
            "tensor<2xf32>",
            r#"%0 = "stablehlo.real"(%a) : (tensor<2xcomplex<f64>>) -> tensor<2xf32>
        func.return %0 : tensor<2xf32>"#,
        ),
        &["expects result element type f64, but got f32 [constraint C2 of stablehlo.real]"],
    );
}

#[test]
fn chlo_broadcasting() {
    ok(&func(
        "%a: tensor<4x1x3xf32>, %b: tensor<5x1xf32>",
        "tensor<4x5x3xf32>",
        r#"%0 = "chlo.broadcast_add"(%a, %b) : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
        func.return %0 : tensor<4x5x3xf32>"#,
    ));
    ok(&func(
        "%a: tensor<4x3xf32>, %b: tensor<4xf32>",
        "tensor<4x3xi1>",
        r#"%0 = "chlo.broadcast_compare"(%a, %b) {broadcast_dimensions = array<i64: 0>, comparison_direction = #chlo<comparison_direction LT>} : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xi1>
        func.return %0 : tensor<4x3xi1>"#,
    ));
    fails(
        &func(
            "%a: tensor<4x2xf32>, %b: tensor<3xf32>",
            "tensor<4x3xf32>",
            r#"%0 = "chlo.broadcast_multiply"(%a, %b) : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<4x3xf32>
        func.return %0 : tensor<4x3xf32>"#,
        ),
        &["operand shapes [4, 2] and [3] are not broadcast-compatible"],
    );
}
