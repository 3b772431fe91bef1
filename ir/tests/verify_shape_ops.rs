//! Verifier rules of the data-movement ops (spec constraints of broadcast_in_dim,
//! reshape, transpose, reverse, slice, dynamic_slice, dynamic_update_slice, concatenate,
//! pad, iota, constant). Expected shapes are hand-derived from the spec formulas; the pad
//! case was cross-checked with jax (`lax.pad`, XLA infers tensor<8x9xf32>).
mod verify_util;
use verify_util::{fails, func, ok};

#[test]
fn constant_and_iota() {
    ok(&func("", "tensor<2xf32>, tensor<3x4xi32>",
        "%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n%1 = stablehlo.iota dim = 1 : tensor<3x4xi32>\nfunc.return %0, %1 : tensor<2xf32>, tensor<3x4xi32>"));
    fails(&func("", "tensor<3x4xi32>",
        "%1 = stablehlo.iota dim = 2 : tensor<3x4xi32>\nfunc.return %1 : tensor<3x4xi32>"),
        &["expects iota_dimension in [0, 2) (the output rank), but got 2 [constraint C1 of stablehlo.iota]"]);
    fails(&func("", "tensor<3xf32>",
        r#"%0 = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
        func.return %0 : tensor<3xf32>"#),
        &["the value has type tensor<2xf32> and the output has type tensor<3xf32> [constraint C1 of stablehlo.constant]"]);
}

#[test]
fn broadcast_in_dim() {
    ok(&func("%a: tensor<1x3xf32>", "tensor<2x3x4xf32>",
        "%0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3x4xf32>\nfunc.return %0 : tensor<2x3x4xf32>"));
    fails(&func("%a: tensor<2x3xf32>", "tensor<2x3x4xf32>",
        "%0 = stablehlo.broadcast_in_dim %a, dims = [0, 2] : (tensor<2x3xf32>) -> tensor<2x3x4xf32>\nfunc.return %0 : tensor<2x3x4xf32>"),
        &["expects operand dimension 1 (size 3) to be 1 or equal to result dimension 2 (size 4) [constraint C5"]);
    fails(&func("%a: tensor<2x3xf32>", "tensor<2x3x4xf32>",
        "%0 = stablehlo.broadcast_in_dim %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<2x3x4xf32>\nfunc.return %0 : tensor<2x3x4xf32>"),
        &["expects broadcast_dimensions to be unique, but 0 repeats [constraint C4"]);
    fails(&func("%a: tensor<2x3xf32>", "tensor<2x3x4xf32>",
        "%0 = stablehlo.broadcast_in_dim %a, dims = [0, 3] : (tensor<2x3xf32>) -> tensor<2x3x4xf32>\nfunc.return %0 : tensor<2x3x4xf32>"),
        &["expects broadcast_dimensions to be in [0, 3), but got 3 [constraint C3"]);
}

#[test]
fn reshape_transpose_reverse() {
    ok(&func("%a: tensor<2x6xf32>", "tensor<3x4xf32>",
        "%0 = stablehlo.reshape %a : (tensor<2x6xf32>) -> tensor<3x4xf32>\nfunc.return %0 : tensor<3x4xf32>"));
    fails(&func("%a: tensor<2x6xf32>", "tensor<3x5xf32>",
        "%0 = stablehlo.reshape %a : (tensor<2x6xf32>) -> tensor<3x5xf32>\nfunc.return %0 : tensor<3x5xf32>"),
        &["tensor<2x6xf32> has 12 and tensor<3x5xf32> has 15 [constraint C2 of stablehlo.reshape]"]);
    ok(&func("%a: tensor<2x3x4xf32>", "tensor<4x2x3xf32>",
        "%0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>\nfunc.return %0 : tensor<4x2x3xf32>"));
    fails(&func("%a: tensor<2x3x4xf32>", "tensor<4x2x3xf32>",
        "%0 = stablehlo.transpose %a, dims = [2, 0, 0] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>\nfunc.return %0 : tensor<4x2x3xf32>"),
        &["expects permutation to be unique, but 0 repeats [constraint C2 of stablehlo.transpose]"]);
    fails(&func("%a: tensor<2x3x4xf32>", "tensor<4x3x2xf32>",
        "%0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>\nfunc.return %0 : tensor<4x3x2xf32>"),
        &["expects result type tensor<4x2x3xf32> (the operand shape permuted by permutation), but got tensor<4x3x2xf32> [constraint C4"]);
    fails(&func("%a: tensor<2x3xf32>", "tensor<2x3xf32>",
        "%0 = stablehlo.reverse %a, dims = [1, 1] : tensor<2x3xf32>\nfunc.return %0 : tensor<2x3xf32>"),
        &["[constraint C2 of stablehlo.reverse]"]);
}

#[test]
fn slices() {
    // ceil((7 - 1) / 2) = 3, ceil((4 - 0) / 3) = 2
    ok(&func("%a: tensor<8x4xf32>", "tensor<3x2xf32>",
        "%0 = stablehlo.slice %a [1:7:2, 0:4:3] : (tensor<8x4xf32>) -> tensor<3x2xf32>\nfunc.return %0 : tensor<3x2xf32>"));
    fails(&func("%a: tensor<8x4xf32>", "tensor<3x2xf32>",
        "%0 = stablehlo.slice %a [1:9:2, 0:4:3] : (tensor<8x4xf32>) -> tensor<3x2xf32>\nfunc.return %0 : tensor<3x2xf32>"),
        &["expects 0 <= start_indices <= limit_indices <= dim(operand) in dimension 0, but got start 1, limit 9, dim 8 [constraint C3"]);
    ok(&func("%a: tensor<8x4xf32>, %i: tensor<i32>", "tensor<2x4xf32>",
        "%0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>\nfunc.return %0 : tensor<2x4xf32>"));
    fails(&func("%a: tensor<8x4xf32>, %i: tensor<i32>", "tensor<2x5xf32>",
        "%0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 5] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x5xf32>\nfunc.return %0 : tensor<2x5xf32>"),
        &["slice size 1 is 5 and the dimension is 4 [constraint C4 of stablehlo.dynamic_slice]"]);
    fails(&func("%a: tensor<8x4xf32>, %u: tensor<2xf32>, %i: tensor<i32>", "tensor<8x4xf32>",
        "%0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<8x4xf32>, tensor<2xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>\nfunc.return %0 : tensor<8x4xf32>"),
        &["requires update and operand to have the same rank, but got 1 and 2 [constraint C3"]);
}

#[test]
fn concatenate_and_pad() {
    ok(&func("%a: tensor<2x3xf32>, %b: tensor<2x5xf32>", "tensor<2x8xf32>",
        "%0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>\nfunc.return %0 : tensor<2x8xf32>"));
    fails(&func("%a: tensor<2x3xf32>, %b: tensor<3x5xf32>", "tensor<2x8xf32>",
        "%0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x8xf32>\nfunc.return %0 : tensor<2x8xf32>"),
        &["input #1 has size 3 in dimension 0 where input #0 has 2 [constraint C2 of stablehlo.concatenate]"]);
    // jax: lax.pad(x, 0., ((1,2,1),(0,-1,2))) on 3x4 gives tensor<8x9xf32>
    ok(&func("%a: tensor<3x4xf32>, %p: tensor<f32>", "tensor<8x9xf32>",
        "%0 = stablehlo.pad %a, %p, low = [1, 0], high = [2, -1], interior = [1, 2] : (tensor<3x4xf32>, tensor<f32>) -> tensor<8x9xf32>\nfunc.return %0 : tensor<8x9xf32>"));
    fails(&func("%a: tensor<3x4xf32>, %p: tensor<f32>", "tensor<8x9xf32>",
        "%0 = stablehlo.pad %a, %p, low = [1, 0], high = [2, -1], interior = [-1, 2] : (tensor<3x4xf32>, tensor<f32>) -> tensor<8x9xf32>\nfunc.return %0 : tensor<8x9xf32>"),
        &["expects non-negative interior_padding, but dimension 0 has -1 [constraint C3 of stablehlo.pad]"]);
}
