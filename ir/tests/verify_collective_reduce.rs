//! `stablehlo.collective_reduce` (spec: docs/spec.md#collective_reduce): generic-form
//! parsing, printing back, and its constraints — data operands reduce one-to-one into
//! results of the operand shape with the computation's element type (C3, C4), an optional
//! trailing `rank-1 i32` root operand with one element per data operand when
//! `has_dynamic_root` (C3), unique replica ids (C1), and a positive channel id when
//! `use_global_device_ids` is set.

mod verify_util;

use neuronc_ir::{parse_module, print_module, OpKind, PrintOptions};
use verify_util::{fails, ok};

const ADD_F32: &str = "^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>";

fn cr(args: &str, results: &str, operands: &str, attrs: &str, ty: &str, body: &str) -> String {
    let lhs = match results.matches("tensor").count() {
        0 => String::new(),
        1 => "%r = ".to_string(),
        n => format!("%r:{n} = "),
    };
    let ret = match results.matches("tensor").count() {
        0 => "func.return".to_string(),
        1 => format!("func.return %r : {results}"),
        n => {
            let vals: Vec<String> = (0..n).map(|i| format!("%r#{i}")).collect();
            format!("func.return {} : {results}", vals.join(", "))
        }
    };
    format!(
        "func.func @main({args}) -> ({results}) {{
  {lhs}\"stablehlo.collective_reduce\"({operands}) ({{
  {body}
  }}) {{{attrs}}} : {ty}
  {ret}
}}
"
    )
}

const GROUPS: &str = "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>";

#[test]
fn accepts_the_spec_forms() {
    // One operand, variadic, promoted computation type (f32 -> f64), dynamic root.
    ok(&cr(
        "%x: tensor<4xf32>",
        "tensor<4xf32>",
        "%x",
        GROUPS,
        "(tensor<4xf32>) -> tensor<4xf32>",
        ADD_F32,
    ));
    ok(&cr(
        "%x: tensor<4xf32>, %y: tensor<2x3xf32>",
        "tensor<4xf32>, tensor<2x3xf32>",
        "%x, %y",
        &format!("{GROUPS}, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids"),
        "(tensor<4xf32>, tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>)",
        ADD_F32,
    ));
    ok(&cr(
        "%x: tensor<4xf32>",
        "tensor<4xf64>",
        "%x",
        GROUPS,
        "(tensor<4xf32>) -> tensor<4xf64>",
        "^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %s = stablehlo.add %a, %b : tensor<f64>
    stablehlo.return %s : tensor<f64>",
    ));
    ok(&cr(
        "%x: tensor<4xf32>, %y: tensor<4xf32>, %root: tensor<2xi32>",
        "tensor<4xf32>, tensor<4xf32>",
        "%x, %y, %root",
        &format!("{GROUPS}, has_dynamic_root"),
        "(tensor<4xf32>, tensor<4xf32>, tensor<2xi32>) -> (tensor<4xf32>, tensor<4xf32>)",
        ADD_F32,
    ));
}

#[test]
fn round_trips_in_generic_form_and_is_a_collective() {
    let src = cr(
        "%x: tensor<4xf32>, %root: tensor<1xi32>",
        "tensor<4xf32>",
        "%x, %root",
        &format!("{GROUPS}, has_dynamic_root"),
        "(tensor<4xf32>, tensor<1xi32>) -> tensor<4xf32>",
        ADD_F32,
    );
    let m = parse_module(&src).unwrap();
    let mut kinds = Vec::new();
    m.walk_ops(|o| kinds.push(m.op(o).kind));
    assert!(kinds.contains(&OpKind::CollectiveReduce));
    assert!(OpKind::CollectiveReduce.has_side_effect());
    for generic in [false, true] {
        let text = print_module(
            &m,
            &PrintOptions {
                generic,
                debug_locs: false,
            },
        );
        // No custom assembly format exists: both forms print it generically.
        assert!(text.contains("\"stablehlo.collective_reduce\"("), "{text}");
        assert!(text.contains("has_dynamic_root"), "{text}");
        let back = parse_module(&text).unwrap();
        assert_eq!(
            print_module(&back, &PrintOptions::default()),
            print_module(&m, &PrintOptions::default())
        );
        neuronc_ir::verify_module(&back).unwrap();
    }
}

#[test]
fn rejects_operand_count_and_root_errors() {
    fails(
        &cr("", "", "", GROUPS, "() -> ()", ADD_F32),
        &["requires at least one data operand"],
    );
    fails(
        &cr(
            "%root: tensor<1xi32>",
            "",
            "%root",
            &format!("{GROUPS}, has_dynamic_root"),
            "(tensor<1xi32>) -> ()",
            ADD_F32,
        ),
        &["at least two operands (data + root)"],
    );
    fails(
        &cr(
            "%x: tensor<4xf32>, %root: tensor<1xf32>",
            "tensor<4xf32>",
            "%x, %root",
            &format!("{GROUPS}, has_dynamic_root"),
            "(tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>",
            ADD_F32,
        ),
        &["rank-1 i32 tensor"],
    );
    fails(
        &cr(
            "%x: tensor<4xf32>, %y: tensor<4xf32>, %root: tensor<1xi32>",
            "tensor<4xf32>, tensor<4xf32>",
            "%x, %y, %root",
            &format!("{GROUPS}, has_dynamic_root"),
            "(tensor<4xf32>, tensor<4xf32>, tensor<1xi32>) -> (tensor<4xf32>, tensor<4xf32>)",
            ADD_F32,
        ),
        &["one element per data operand (2), but got 1"],
    );
}

#[test]
fn rejects_group_channel_body_and_result_errors() {
    // C1: replica ids unique.
    fails(
        &cr(
            "%x: tensor<4xf32>",
            "tensor<4xf32>",
            "%x",
            "replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>",
            "(tensor<4xf32>) -> tensor<4xf32>",
            ADD_F32,
        ),
        &["replica id 0 repeats"],
    );
    // use_global_device_ids needs a positive channel id.
    fails(
        &cr(
            "%x: tensor<4xf32>",
            "tensor<4xf32>",
            "%x",
            &format!("{GROUPS}, use_global_device_ids"),
            "(tensor<4xf32>) -> tensor<4xf32>",
            ADD_F32,
        ),
        &["positive channel_id"],
    );
    // C4: the computation takes two scalars.
    fails(
        &cr(
            "%x: tensor<4xf32>",
            "tensor<4xf32>",
            "%x",
            GROUPS,
            "(tensor<4xf32>) -> tensor<4xf32>",
            "^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>",
        ),
        &["expects the body to have type"],
    );
    // C3: the result keeps the operand shape.
    fails(
        &cr(
            "%x: tensor<4xf32>",
            "tensor<2xf32>",
            "%x",
            GROUPS,
            "(tensor<4xf32>) -> tensor<2xf32>",
            ADD_F32,
        ),
        &["expects result type tensor<4xf32>"],
    );
    // C3: one result per data operand.
    fails(
        &cr(
            "%x: tensor<4xf32>, %y: tensor<4xf32>",
            "tensor<4xf32>",
            "%x, %y",
            GROUPS,
            "(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
            ADD_F32,
        ),
        &["one result per data operand (2), but got 1"],
    );
}
