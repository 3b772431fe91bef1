//! What the parser builds: attribute values (checked against hand-derived bit patterns
//! and the IEEE/OCP encodings), pretty-vs-generic equivalence, regions built by compact
//! syntaxes, spans and resolved locations.

use neuronc_ir::{parse_module, Attr, DenseData, ElemType, Module, OpKind};

fn module(body: &str, arg: &str, ret: &str) -> Module {
    let src = format!("func.func @main(%arg0: {arg}) -> {ret} {{\n{body}\n}}\n");
    parse_module(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// The attrs of the first op of `main`.
fn first_attrs(m: &Module) -> neuronc_ir::NamedAttrs {
    let f = m.func("main").unwrap();
    m.op(m.region(f.body).ops[0]).attrs.clone()
}

fn dense_bytes(src_const: &str, ty: &str) -> (bool, Vec<u8>) {
    let m = module(
        &format!("  %0 = stablehlo.constant {src_const} : {ty}\n  return %0 : {ty}"),
        "tensor<i1>",
        ty,
    );
    match first_attrs(&m).get("value") {
        Some(Attr::Elements(e)) => (e.is_splat(), e.to_bytes()),
        other => panic!("no dense value: {other:?}"),
    }
}

#[test]
fn dense_payloads_decode_to_the_expected_bytes() {
    // 1.0f32 = 0x3F800000, little-endian; one element's worth of hex is a splat.
    assert_eq!(
        dense_bytes("dense<\"0x0000803F\">", "tensor<2xf32>"),
        (true, [0, 0, 0x80, 0x3F].repeat(2))
    );
    assert_eq!(
        dense_bytes("dense<[[1, 2], [3, -1]]>", "tensor<2x2xi16>"),
        (false, vec![1, 0, 2, 0, 3, 0, 0xFF, 0xFF])
    );
    // bf16 NaN from a hex literal, -0.5 = 0xBF00.
    assert_eq!(
        dense_bytes("dense<[0x7FC0, -0.5]>", "tensor<2xbf16>"),
        (false, vec![0xC0, 0x7F, 0x00, 0xBF])
    );
    // f16 max = 0x7BFF; f8E4M3FN max 448 = 0x7E (OCP spec).
    assert_eq!(
        dense_bytes("dense<65504.0>", "tensor<f16>"),
        (true, vec![0xFF, 0x7B])
    );
    assert_eq!(
        dense_bytes("dense<[448.0, -2.0]>", "tensor<2xf8E4M3FN>"),
        (false, vec![0x7E, 0xC0])
    );
    // complex<f32> (1.0, 2.0): real then imaginary part.
    assert_eq!(
        dense_bytes("dense<(1.0, 2.0)>", "tensor<complex<f32>>"),
        (true, vec![0, 0, 0x80, 0x3F, 0, 0, 0, 0x40])
    );
    assert_eq!(
        dense_bytes("dense<[true, false]>", "tensor<2xi1>"),
        (false, vec![1, 0])
    );
    assert_eq!(
        dense_bytes("dense<18446744073709551615>", "tensor<ui64>"),
        (true, vec![0xFF; 8])
    );
    // Equal elements collapse to a splat, as in MLIR.
    assert_eq!(
        dense_bytes("dense<[7, 7, 7]>", "tensor<3xi8>"),
        (true, vec![7, 7, 7])
    );
}

#[test]
fn pretty_and_generic_forms_give_the_same_attributes() {
    let pairs = [
        (
            "%0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
            "%0 = \"stablehlo.transpose\"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>",
            "tensor<3x2xf32>",
        ),
        (
            "%0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, HIGH] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>",
            "%0 = \"stablehlo.dot_general\"(%arg0, %arg0) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGH>]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>",
            "tensor<2x2xf32>",
        ),
        (
            "%0 = stablehlo.compare GT, %arg0, %arg0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>",
            "%0 = \"stablehlo.compare\"(%arg0, %arg0) {compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>",
            "tensor<2x3xi1>",
        ),
        (
            "%0 = stablehlo.slice %arg0 [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>",
            "%0 = \"stablehlo.slice\"(%arg0) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>",
            "tensor<2x1xf32>",
        ),
        (
            "%0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<2x3xf32>",
            "%0 = \"stablehlo.reduce_precision\"(%arg0) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<2x3xf32>) -> tensor<2x3xf32>",
            "tensor<2x3xf32>",
        ),
    ];
    for (pretty, generic, ret) in pairs {
        let a = module(
            &format!("  {pretty}\n  return %0 : {ret}"),
            "tensor<2x3xf32>",
            ret,
        );
        let b = module(
            &format!("  {generic}\n  return %0 : {ret}"),
            "tensor<2x3xf32>",
            ret,
        );
        assert_eq!(first_attrs(&a), first_attrs(&b), "{pretty}");
    }
}

#[test]
fn compact_reduce_builds_its_region() {
    let m = module(
        "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>",
        "tensor<2x3xf32>",
        "tensor<2xf32>",
    );
    let f = m.func("main").unwrap();
    let red = m.op(m.region(f.body).ops[1]);
    assert_eq!(red.kind, OpKind::Reduce);
    assert_eq!(red.attrs.i64_array("dimensions"), Some(vec![1]));
    let r = m.region(red.regions[0]);
    assert_eq!(r.args.len(), 2);
    let scalar = m.types.display(m.value_type(r.args[0]));
    assert_eq!(scalar, "tensor<f32>");
    let kinds: Vec<OpKind> = r.ops.iter().map(|&o| m.op(o).kind).collect();
    assert_eq!(kinds, vec![OpKind::Add, OpKind::Return]);
    assert_eq!(m.op(r.ops[0]).operands, r.args);
}

#[test]
fn spans_start_at_the_op_name_and_locations_resolve() {
    let src = "#loc1 = loc(\"a.py\":3:4)\nmodule @m attributes {mhlo.num_replicas = 1 : i32} {\n  func.func private @main(%arg0: tensor<2xf32> {mhlo.sharding = \"{replicated}\"}) -> (tensor<2xf32> {jax.result_info = \"r\"}) {\n    %0:2 = stablehlo.optimization_barrier %arg0, %arg0 : tensor<2xf32>, tensor<2xf32> loc(#loc2)\n    return %0#1 : tensor<2xf32>\n  } loc(#loc1)\n}\n#loc2 = loc(callsite(\"f\"(#loc1) at #loc1))\n";
    let m = parse_module(src).unwrap();
    assert_eq!(m.name.as_deref(), Some("m"));
    assert_eq!(m.attrs.int("mhlo.num_replicas"), Some(1));
    let f = m.func("main").unwrap();
    assert_eq!(f.visibility.as_deref(), Some("private"));
    assert_eq!(f.arg_attrs[0].str("mhlo.sharding"), Some("{replicated}"));
    assert_eq!(f.result_attrs[0].str("jax.result_info"), Some("r"));
    assert_eq!(
        &src[f.span.start as usize..f.span.start as usize + 9],
        "func.func"
    );
    let ops = &m.region(f.body).ops;
    let bar = m.op(ops[0]);
    let text = &src[bar.span.start as usize..bar.span.end as usize];
    assert!(
        text.starts_with("stablehlo.optimization_barrier %arg0"),
        "{text}"
    );
    assert_eq!(bar.results.len(), 2);
    // `%0#1` is the second result.
    assert_eq!(m.op(ops[1]).operands, vec![bar.results[1]]);
    let loc = &m.locs[bar.loc.unwrap().index()];
    assert_eq!(loc, "loc(callsite(\"f\"(\"a.py\":3:4) at \"a.py\":3:4))");
    assert_eq!(m.locs[f.loc.unwrap().index()], "loc(\"a.py\":3:4)");
}

#[test]
fn float_attribute_forms() {
    let m = module(
        "  %0 = \"stablehlo.batch_norm_inference\"(%arg0, %arg1, %arg1, %arg1, %arg1) {epsilon = 0x3A83126F : f32, feature_index = 0 : i64, x = -2.5, y = 1 : ui8, z = true} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>",
        "tensor<2xf32>, %arg1: tensor<2xf32>",
        "tensor<2xf32>",
    );
    let a = first_attrs(&m);
    // 0x3A83126F is the f32 nearest to 0.001.
    assert_eq!(
        a.get("epsilon"),
        Some(&Attr::Float(0.001f32 as f64, ElemType::F32))
    );
    assert_eq!(a.get("x"), Some(&Attr::Float(-2.5, ElemType::F64)));
    assert_eq!(a.get("y"), Some(&Attr::Int(1, ElemType::UInt(8))));
    assert_eq!(a.get("z"), Some(&Attr::Bool(true)));
    assert!(matches!(
        a.get("feature_index"),
        Some(Attr::Int(0, ElemType::Int(64)))
    ));
    let _ = DenseData::Splat(Box::new([]));
}
