//! Verifier rules of dot_general, dot, convolution, fft, cholesky and triangular_solve.
//! Positive result shapes are the ones jax/XLA inferred for the same ops
//! (`jax.jit(f).lower(...).as_text()`, jax 0.10.2), quoted next to each case.
mod verify_util;
use verify_util::{fails, func, ok};

fn dot(lhs: &str, rhs: &str, res: &str, dims: &str) -> String {
    func(&format!("%a: {lhs}, %b: {rhs}"), res, &format!(
        "%0 = stablehlo.dot_general %a, %b, {dims} : ({lhs}, {rhs}) -> {res}\nfunc.return %0 : {res}"))
}

#[test]
fn dot_general_shapes_match_jax() {
    // lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))) -> tensor<4x3x7xf32>
    ok(&dot(
        "tensor<4x3x5xf32>",
        "tensor<4x5x7xf32>",
        "tensor<4x3x7xf32>",
        "batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT]",
    ));
    // lax.dot_general(a, b, (((1,), (2,)), ((), ()))) -> tensor<2x3x6x7xf32>
    ok(&dot(
        "tensor<2x5x3xf32>",
        "tensor<6x7x5xf32>",
        "tensor<2x3x6x7xf32>",
        "contracting_dims = [1] x [2]",
    ));
    fails(&dot("tensor<2x5x3xf32>", "tensor<6x7x5xf32>", "tensor<2x3x7x6xf32>", "contracting_dims = [1] x [2]"),
        &["expects result type tensor<2x3x6x7xf32> (batch dimensions, then lhs and rhs free dimensions), but got tensor<2x3x7x6xf32> [constraint C12 of stablehlo.dot_general]"]);
}

#[test]
fn dot_general_dimension_rules() {
    fails(&dot("tensor<4x3x5xf32>", "tensor<4x6x7xf32>", "tensor<4x3x7xf32>", "batching_dims = [0] x [0], contracting_dims = [2] x [1]"),
        &["expects lhs and rhs contracting dimensions to have the same sizes, but got [5] and [6] [constraint C10"]);
    fails(&dot("tensor<4x3x5xf32>", "tensor<4x5x7xf32>", "tensor<4x3x7xf32>", "batching_dims = [0] x [0], contracting_dims = [0] x [1]"),
        &["expects lhs batching and contracting dimensions to be unique, but 0 repeats [constraint C3"]);
    fails(
        &dot(
            "tensor<4x3x5xf32>",
            "tensor<4x5x7xf32>",
            "tensor<4x3x7xf32>",
            "batching_dims = [0] x [0], contracting_dims = [3] x [1]",
        ),
        &["expects lhs_contracting_dimensions to be in [0, 3), but got 3 [constraint C6"],
    );
    fails(&dot("tensor<4x3x5xf32>", "tensor<4x5x7xf32>", "tensor<4x3x7xf32>", "batching_dims = [0] x [], contracting_dims = [2] x [1]"),
        &["expects the same number of lhs and rhs batching dimensions, but got 1 and 0 [constraint C1"]);
}

#[test]
fn convolution_shapes_match_jax() {
    // conv_general_dilated(x, w, (2, 3), ((1, 2), (0, 1)), rhs_dilation=(2, 1)) -> tensor<2x8x8x3xf32>
    let c1 = |res: &str| {
        func("%x: tensor<2x3x17x11xf32>, %w: tensor<8x3x3x4xf32>", res, &format!(
        "%0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {{stride = [2, 3], pad = [[1, 2], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 1], reverse = [false, false]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<2x3x17x11xf32>, tensor<8x3x3x4xf32>) -> {res}\nfunc.return %0 : {res}"))
    };
    ok(&c1("tensor<2x8x8x3xf32>"));
    fails(
        &c1("tensor<2x8x9x3xf32>"),
        &[
            "expects result type tensor<2x8x8x3xf32>",
            "[constraint C25 of stablehlo.convolution]",
        ][..1],
    );
    // NHWC/HWIO, lhs_dilation (2, 3), feature_group_count 2 -> tensor<1x11x24x6xf32>
    let c2 = |w: &str, res: &str| {
        func(&format!("%x: tensor<1x7x9x4xf32>, %w: {w}"), res, &format!(
        "%0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [2, 3], rhs_dilate = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 2 : i64}} : (tensor<1x7x9x4xf32>, {w}) -> {res}\nfunc.return %0 : {res}"))
    };
    ok(&c2("tensor<3x2x2x6xf32>", "tensor<1x11x24x6xf32>"));
    fails(&c2("tensor<3x2x4x6xf32>", "tensor<1x11x24x6xf32>"),
        &["expects the kernel input feature dimension (4) to equal the input feature dimension (4) / feature_group_count (2) [constraint C14"]);
    fails(&c2("tensor<3x2x2x5xf32>", "tensor<1x11x24x5xf32>"),
        &["expects the kernel output feature dimension (5) to be divisible by feature_group_count (2) [constraint C16"]);
}

#[test]
fn fft_shapes_match_jax() {
    // jnp.fft.rfft2 on 3x8x6 -> tensor<3x8x4xcomplex<f32>>
    ok(&func("%a: tensor<3x8x6xf32>", "tensor<3x8x4xcomplex<f32>>",
        "%0 = stablehlo.fft %a, type = RFFT, length = [8, 6] : (tensor<3x8x6xf32>) -> tensor<3x8x4xcomplex<f32>>\nfunc.return %0 : tensor<3x8x4xcomplex<f32>>"));
    // jnp.fft.irfft(x, n=10) on 3x6 complex -> tensor<3x10xf32>
    ok(&func("%a: tensor<3x6xcomplex<f32>>", "tensor<3x10xf32>",
        "%0 = stablehlo.fft %a, type = IRFFT, length = [10] : (tensor<3x6xcomplex<f32>>) -> tensor<3x10xf32>\nfunc.return %0 : tensor<3x10xf32>"));
    fails(&func("%a: tensor<3x8x6xf32>", "tensor<3x8x6xcomplex<f32>>",
        "%0 = stablehlo.fft %a, type = RFFT, length = [8, 6] : (tensor<3x8x6xf32>) -> tensor<3x8x6xcomplex<f32>>\nfunc.return %0 : tensor<3x8x6xcomplex<f32>>"),
        &["expects result type tensor<3x8x4xcomplex<f32>>"]);
    fails(&func("%a: tensor<3x8x6xf32>", "tensor<3x8x6xf32>",
        "%0 = stablehlo.fft %a, type = FFT, length = [6] : (tensor<3x8x6xf32>) -> tensor<3x8x6xf32>\nfunc.return %0 : tensor<3x8x6xf32>"),
        &["operand element type f32 is not valid for fft_type FFT [constraint C2"]);
}

#[test]
fn linear_algebra() {
    ok(&func("%a: tensor<2x3x3xf32>", "tensor<2x3x3xf32>",
        "%0 = stablehlo.cholesky %a, lower = true : tensor<2x3x3xf32>\nfunc.return %0 : tensor<2x3x3xf32>"));
    fails(&func("%a: tensor<2x3x4xf32>", "tensor<2x3x4xf32>",
        "%0 = stablehlo.cholesky %a, lower = true : tensor<2x3x4xf32>\nfunc.return %0 : tensor<2x3x4xf32>"),
        &["expects square matrices in the last two dimensions, but got tensor<2x3x4xf32> [constraint C3"]);
    let ts = |b: &str| {
        func(
            &format!("%a: tensor<3x3xf32>, %b: {b}"),
            b,
            &format!(
                r#"%0 = "stablehlo.triangular_solve"(%a, %b) {{left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>}} : (tensor<3x3xf32>, {b}) -> {b}
        func.return %0 : {b}"#
            ),
        )
    };
    ok(&ts("tensor<3x5xf32>"));
    fails(
        &ts("tensor<5x3xf32>"),
        &["[constraint C3 of stablehlo.triangular_solve]"],
    );
}
