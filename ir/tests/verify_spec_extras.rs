//! Rules added for StableHLO's own verifier tests: `dynamic_conv` (convolution with an
//! operand padding), `dynamic_gather` with run-time slice sizes, the known dot algorithms,
//! `all_to_all` without replica groups, mesh-axes replica groups, and `arith.constant`
//! tensors. Expected shapes come from the spec's formulas and examples.

mod verify_util;

use neuronc_ir::{parse_module, print_module, OpKind, PrintOptions};
use verify_util::{fails, func, ok};

/// The spec's `dynamic_conv` example (lhs 1x4x4x1, rhs 3x3x1x1, strides 4, lhs dilation
/// 2), with `pad` defining `%padding` and the given result type.
fn dynamic_conv(args: &str, pad: &str, pad_ty: &str, result: &str) -> String {
    func(
        &format!("%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<3x3x1x1xi64>{args}"),
        result,
        &format!(
            "{pad}
  %r = \"stablehlo.dynamic_conv\"(%lhs, %rhs, %padding) {{
    window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>,
    rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64, batch_group_count = 1 : i64
  }} : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, {pad_ty}) -> {result}
  func.return %r : {result}"
        ),
    )
}

const CONST_PAD: &str = "%padding = stablehlo.constant dense<1> : tensor<2x2xi64>";

#[test]
fn dynamic_conv_uses_a_constant_padding() {
    // Spec example: padding [[1, 1], [1, 1]] gives a 1x2x2x1 result.
    ok(&dynamic_conv(
        "",
        CONST_PAD,
        "tensor<2x2xi64>",
        "tensor<1x2x2x1xi64>",
    ));
    fails(
        &dynamic_conv("", CONST_PAD, "tensor<2x2xi64>", "tensor<1x3x3x1xi64>"),
        &["expects result type tensor<1x2x2x1xi64>"],
    );
}

#[test]
fn dynamic_conv_with_run_time_padding_checks_the_rest() {
    let arg = ", %padding: tensor<2x2xi64>";
    // Spatial sizes depend on the padding: any is accepted.
    ok(&dynamic_conv(
        arg,
        "",
        "tensor<2x2xi64>",
        "tensor<1x7x7x1xi64>",
    ));
    // The batch and feature dimensions do not.
    fails(
        &dynamic_conv(arg, "", "tensor<2x2xi64>", "tensor<2x7x7x1xi64>"),
        &["expects result type tensor<1x7x7x1xi64>"],
    );
    // C4: padding is [number of spatial dimensions, 2].
    fails(
        &dynamic_conv(
            ", %padding: tensor<3x2xi64>",
            "",
            "tensor<3x2xi64>",
            "tensor<1x2x2x1xi64>",
        ),
        &["padding to be an integer tensor of shape [2, 2]"],
    );
}

fn dynamic_gather(result: &str) -> String {
    func(
        "%operand: tensor<2x4x9xi32>, %idx: tensor<1x5x2xi32>, %sizes: tensor<3xi32>",
        result,
        &format!(
            "  %r = \"stablehlo.dynamic_gather\"(%operand, %idx, %sizes) {{
    dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>
  }} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>, tensor<3xi32>) -> {result}
  func.return %r : {result}"
        ),
    )
}

#[test]
fn dynamic_gather_result_rank_and_batch_dims_are_known() {
    // Batch dimensions [1, 5] from the indices, one offset dimension of run-time size.
    ok(&dynamic_gather("tensor<1x5x8xi32>"));
    fails(
        &dynamic_gather("tensor<3xi32>"),
        &["expects a result of shape [1x5x?]"],
    );
    fails(
        &dynamic_gather("tensor<1x4x8xi32>"),
        &["expects a result of shape [1x5x?]"],
    );
}

fn dot_with(lhs: &str, acc: &str, ops: i64, imprecise: bool, ty: &str) -> String {
    func(
        &format!("%a: tensor<2x2x{ty}>, %b: tensor<2x2x{ty}>"),
        &format!("tensor<2x2x{acc}>"),
        &format!(
            "  %r = \"stablehlo.dot_general\"(%a, %b) {{
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>,
    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = {lhs}, rhs_precision_type = {lhs}, accumulation_type = {acc}, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = {ops}, allow_imprecise_accumulation = {imprecise}>
  }} : (tensor<2x2x{ty}>, tensor<2x2x{ty}>) -> tensor<2x2x{acc}>
  func.return %r : tensor<2x2x{acc}>"
        ),
    )
}

#[test]
fn only_known_dot_algorithms_are_accepted() {
    ok(&dot_with("f32", "f32", 1, false, "f32"));
    ok(&dot_with("bf16", "f32", 6, false, "f32"));
    ok(&dot_with("tf32", "f32", 3, false, "f32"));
    // Any pair of 8-bit floats accumulating in f32 may be imprecise.
    ok(&dot_with("f8E4M3FN", "f32", 1, true, "f32"));
    let unknown = "dot algorithm not known to be supported on any hardware";
    fails(&dot_with("f32", "f32", 3, false, "f32"), &[unknown]);
    fails(&dot_with("f16", "f16", 1, true, "f16"), &[unknown]);
    fails(&dot_with("f64", "f32", 1, false, "f32"), &[unknown]);
}

#[test]
fn all_to_all_needs_groups_of_split_count() {
    let a2a = |groups: &str| {
        func(
            "%x: tensor<4x16xf32>",
            "tensor<16x4xf32>",
            &format!(
                "  %r = \"stablehlo.all_to_all\"(%x) {{split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = {groups}}} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  func.return %r : tensor<16x4xf32>"
            ),
        )
    };
    ok(&a2a("dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>"));
    fails(
        &a2a("dense<0> : tensor<0x2xi64>"),
        &["replica groups of size split_count (4), but there are none"],
    );
}

#[test]
fn mesh_axes_replica_groups_name_a_module_symbol() {
    let gather = |mesh: &str| {
        format!(
            "func.func private @mesh()
{}",
            func(
                "%x: tensor<16x8xf32>",
                "tensor<16x16xf32>",
                &format!(
                    "  %r = \"stablehlo.all_gather\"(%x) {{all_gather_dim = 1 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @{mesh}, axes = [#stablehlo.axis_ref<name = \"a\">]>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>}} : (tensor<16x8xf32>) -> tensor<16x16xf32>
  func.return %r : tensor<16x16xf32>"
                ),
            )
        )
    };
    ok(&gather("mesh"));
    fails(
        &gather("missing"),
        &["replica_groups: mesh symbol 'missing' not found"],
    );
}

#[test]
fn arith_constant_tensors_read_as_stablehlo_constant() {
    let src = func(
        "",
        "tensor<2xi32>, tensor<f32>",
        "  %a = arith.constant dense<[100, 100]> : tensor<2xi32>
  %b = \"arith.constant\"() <{value = dense<1.5> : tensor<f32>}> : () -> tensor<f32>
  func.return %a, %b : tensor<2xi32>, tensor<f32>",
    );
    ok(&src);
    let m = parse_module(&src).unwrap();
    let mut kinds = Vec::new();
    m.walk_ops(|o| kinds.push(m.op(o).kind));
    assert_eq!(kinds[..2], [OpKind::Constant, OpKind::Constant]);
    let text = print_module(&m, &PrintOptions::default());
    assert!(
        text.contains("stablehlo.constant dense<100> : tensor<2xi32>"),
        "{text}"
    );
    // Scalar (non-tensor) constants have no place in the IR.
    let scalar = func("", "", "  %c = arith.constant 0 : i32\n  func.return");
    assert!(parse_module(&scalar).is_err());
}

#[test]
fn chlo_constant_like_value_has_the_result_element_type() {
    let like = |value: &str| {
        func(
            "%x: tensor<1x2xi64>",
            "tensor<1x2xi32>",
            &format!(
                "  %r = \"chlo.constant_like\"(%x) {{value = {value}}} : (tensor<1x2xi64>) -> tensor<1x2xi32>
  func.return %r : tensor<1x2xi32>"
            ),
        )
    };
    ok(&like("3 : i32"));
    fails(
        &like("3.2 : f32"),
        &["value's type doesn't match element return type i32"],
    );
}
