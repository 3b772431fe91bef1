//! Shardy (`sdy`) syntax and rules: meshes and sharding annotations parse, print back
//! byte-identically in both forms (the jaxlib oracle test covers the corpus chunks in
//! `corpus/ops_pretty.mlir`), verify, and invalid ones are rejected. Every negative case
//! here is also rejected by jaxlib's Shardy verifier (same rule, its wording in comments).
//! Also: `dot_general` / `dot` accept operands of different element types (jaxlib does),
//! `convolution` does not (jaxlib: "expects lhs and rhs to have compatible element type").

mod verify_util;
use neuronc_ir::{parse_module, print_module, Attr, OpKind, PrintOptions};
use verify_util::{fails, ok};

const MODULE: &str = r#"module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}
  sdy.mesh @grid = <["a"=2, "b"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<2x4xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<2x4xf32>
    %1 = sdy.reshard %0 <@grid, [{"a", ?}, {"b"}p1]> {foo = 1 : i64} : tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
}
"#;

const GENERIC: PrintOptions = PrintOptions {
    generic: true,
    debug_locs: false,
};

#[test]
fn meshes_and_annotations_round_trip() {
    let m = parse_module(MODULE).unwrap();
    assert_eq!(m.meshes.len(), 2);
    assert_eq!(m.meshes[0].name, "mesh");
    assert_eq!(m.meshes[0].body, r#"<["x"=1]>"#);
    assert_eq!(m.meshes[0].attrs.len(), 1);
    assert!(m.meshes[1].attrs.is_empty());
    let kinds: Vec<OpKind> = m
        .region(m.funcs[0].body)
        .ops
        .iter()
        .map(|&o| m.op(o).kind)
        .collect();
    assert_eq!(
        kinds,
        [
            OpKind::SdyShardingConstraint,
            OpKind::SdyReshard,
            OpKind::FuncReturn
        ]
    );
    let first = m.op(m.region(m.funcs[0].body).ops[0]);
    assert_eq!(
        first.attrs.get("sharding"),
        Some(&Attr::Opaque(r#"#sdy.sharding<@mesh, [{"x"}, {}]>"#.into()))
    );
    ok(MODULE);
    // Pretty: our print is the input itself (it is in MLIR's canonical form).
    let pretty = print_module(&m, &PrintOptions::default());
    assert_eq!(pretty, MODULE);
    // Generic: the annotation keeps its attribute, re-parses to the same module.
    let generic = print_module(&m, &GENERIC);
    assert!(generic.contains(
        r#""sdy.sharding_constraint"(%arg0) {sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}"#
    ));
    let m2 = parse_module(&generic).unwrap();
    assert_eq!(print_module(&m2, &PrintOptions::default()), MODULE);
}

#[test]
fn generic_mesh_form_parses_to_the_same_mesh() {
    let src = r#""builtin.module"() <{sym_name = "g"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = []}} : () -> ()
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "sdy.reshard"(%arg0) <{sharding = #sdy.sharding<@mesh, [{}]>}> : (tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%0) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"#;
    let m = parse_module(src).unwrap();
    ok(src);
    let text = print_module(&m, &PrintOptions::default());
    assert!(text.contains("  sdy.mesh @mesh = <[\"x\"=1]> {stablehlo.mesh = {axes = []}}\n"));
    assert!(text.contains("%0 = sdy.reshard %arg0 <@mesh, [{}]> : tensor<2xf32>"));
}

fn annotated(body: &str) -> String {
    format!(
        "module {{\n  sdy.mesh @mesh = <[\"x\"=1]>\n  func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {{\n{body}\n  }}\n}}\n"
    )
}

#[test]
fn invalid_annotations_are_rejected() {
    // jaxlib: "requires the same type for all operands and results".
    fails(
        &annotated(
            r#"    %0 = "sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}> : (tensor<2x4xf32>) -> tensor<2x4xf16>
    %1 = stablehlo.convert %0 : (tensor<2x4xf16>) -> tensor<2x4xf32>
    return %1 : tensor<2x4xf32>"#,
        ),
        &["expects the result type to equal the operand type tensor<2x4xf32>, but got tensor<2x4xf16>"],
    );
    // jaxlib: "requires attribute 'sharding'".
    fails(
        &annotated(
            r#"    %0 = "sdy.reshard"(%arg0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>"#,
        ),
        &["'sdy.reshard' op requires attribute 'sharding'"],
    );
    // jaxlib: "unknown mesh: @nomesh".
    fails(
        &annotated(
            r#"    %0 = sdy.sharding_constraint %arg0 <@nomesh, [{}, {}]> : tensor<2x4xf32>
    return %0 : tensor<2x4xf32>"#,
        ),
        &["sharding refers to unknown mesh '@nomesh'"],
    );
    // jaxlib: "sharding doesn't match tensor rank: 1 != 2".
    fails(
        &annotated(
            r#"    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}]> : tensor<2x4xf32>
    return %0 : tensor<2x4xf32>"#,
        ),
        &["sharding has 1 dimension shardings but the tensor has rank 2"],
    );
}

#[test]
fn mesh_names_are_unique_symbols() {
    // jaxlib: "redefinition of symbol named 'mesh'".
    let src = "module {\n  sdy.mesh @mesh = <[\"x\"=1]>\n  sdy.mesh @mesh = <[]>\n  \
               func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n    \
               return %arg0 : tensor<2xf32>\n  }\n}\n";
    fails(src, &["redefinition of symbol '@mesh' (sdy.mesh)"]);
}

#[test]
fn shard_map_gets_a_clear_diagnostic() {
    // jax 0.10.2: jax.jit(shard_map(lambda a: jnp.sin(a) * 2, mesh=<2 CPU devices>,
    // in_specs=P("x"), out_specs=P("x"))).lower(x).as_text().
    let src = r#"module @jit__lambda attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<4xf32>) {
      %1 = stablehlo.sine %arg1 : tensor<4xf32>
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %3 = stablehlo.multiply %1, %2 : tensor<4xf32>
      sdy.return %3 : tensor<4xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"#;
    let e = parse_module(src).unwrap_err().0;
    assert!(
        e.message
            .contains("'sdy.manual_computation' (jax shard_map over a mesh of several devices) is not supported"),
        "{}",
        e.message
    );
    assert_eq!(
        &src[e.span.start as usize..e.span.end as usize],
        "sdy.manual_computation"
    );
}

fn contraction(op: &str, lhs: &str, rhs: &str, res: &str) -> String {
    format!(
        "func.func @main(%a: {lhs}, %b: {rhs}) -> {res} {{\n  %0 = {op} : ({lhs}, {rhs}) -> {res}\n  return %0 : {res}\n}}\n"
    )
}

#[test]
fn mixed_element_type_contractions() {
    // Accepted by jaxlib (and XLA:CPU compiles them): fp8 training, int x float, bf16 x f64.
    let dg = "stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]";
    for (l, r) in [
        ("f8E4M3FN", "f8E5M2"),
        ("f8E5M2", "f8E4M3FN"),
        ("i8", "f32"),
        ("bf16", "f64"),
    ] {
        ok(&contraction(
            dg,
            &format!("tensor<2x3x{l}>"),
            &format!("tensor<3x2x{r}>"),
            "tensor<2x2xf32>",
        ));
    }
    ok(&contraction(
        "stablehlo.dot %a, %b",
        "tensor<2x3xf8E4M3FN>",
        "tensor<3x2xf8E5M2>",
        "tensor<2x2xf32>",
    ));
    // The shape rules still apply to mixed operands.
    fails(
        &contraction(
            dg,
            "tensor<2x3xf8E4M3FN>",
            "tensor<3x2xf8E5M2>",
            "tensor<2x3xf32>",
        ),
        &["expects result type tensor<2x2xf32>"],
    );
    // jaxlib: "expects lhs and rhs to have compatible element type".
    let conv = "stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}";
    fails(
        &contraction(
            conv,
            "tensor<1x4x4x1xf8E4M3FN>",
            "tensor<3x3x1x1xf8E5M2>",
            "tensor<1x2x2x1xf32>",
        ),
        &["requires lhs and rhs to have the same element type, but got f8E4M3FN and f8E5M2"],
    );
}
