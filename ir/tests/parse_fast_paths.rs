//! The parser reads the common spellings (compact tensor types, numeric operands, plain
//! dimension lists) straight from the bytes and everything else through tokens. MLIR
//! gives both spellings of each pair below the same meaning, so both paths must build
//! the same IR; and the fast paths must leave malformed input to the token path's
//! diagnostics.

use neuronc_ir::{parse_module, Attr, Module};

fn module(src: &str) -> Module {
    parse_module(src).unwrap_or_else(|e| panic!("{e:?}\n{src}"))
}

/// Ops of `main`, in order.
fn ops(m: &Module) -> Vec<&neuronc_ir::Op> {
    let f = m.func("main").unwrap();
    m.region(f.body).ops.iter().map(|&o| m.op(o)).collect()
}

#[test]
fn blank_and_compact_tensor_spellings_are_one_type() {
    // `tensor<2x3xf32 >` (blank before `>`) takes the token path, the rest the fast path.
    let m = module(
        "func.func @main(%a: tensor<2x3xf32 >) -> tensor<2x3xf32> {\n\
         \x20 %0 = stablehlo.add %a, %a : tensor<2x3xf32>\n\
         \x20 %1 = stablehlo.abs %0 : (tensor<2x3xf32 >) -> tensor<2x3xf32>\n\
         \x20 return %1 : tensor<2x3xf32>\n}\n",
    );
    let o = ops(&m);
    let a = m.region(m.func("main").unwrap().body).args[0];
    assert_eq!(m.value_type(a), m.value_type(o[0].results[0]));
    assert_eq!(m.value_type(o[0].results[0]), m.value_type(o[1].results[0]));
    assert_eq!(m.types.display(m.value_type(a)), "tensor<2x3xf32>");
}

#[test]
fn numeric_operands_match_the_result_number_spelling() {
    // `%0` (fast path) and `%0#0` (token path) name the same value.
    let m = module(
        "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n\
         \x20 %0 = stablehlo.abs %a : tensor<f32>\n\
         \x20 %1 = stablehlo.add %0, %0#0 : tensor<f32>\n\
         \x20 return %1 : tensor<f32>\n}\n",
    );
    let o = ops(&m);
    assert_eq!(o[1].operands, vec![o[0].results[0], o[0].results[0]]);
}

#[test]
fn dimension_lists_read_the_same_on_one_line_or_several() {
    let dims = |list: &str| {
        let m = module(&format!(
            "func.func @main(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {{\n\
             \x20 %0 = stablehlo.transpose %a, dims = {list} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>\n\
             \x20 return %0 : tensor<4x2x3xf32>\n}}\n"
        ));
        match ops(&m)[0].attrs.get("permutation") {
            Some(Attr::IntArray(_, v)) => v.clone(),
            other => panic!("no permutation: {other:?}"),
        }
    };
    assert_eq!(dims("[2, 0, 1]"), vec![2, 0, 1]);
    assert_eq!(dims("[2,0 , 1]"), vec![2, 0, 1]);
    assert_eq!(dims("[2,\n 0, // two\n 1]"), vec![2, 0, 1]);
}

#[test]
fn spellings_the_fast_paths_decline_still_parse() {
    // Hex entries (MLIR integer literals: 0x2 = 2) go through the token path.
    let m = module(
        "func.func @main(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {\n\
         \x20 %0 = stablehlo.transpose %a, dims = [0x2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>\n\
         \x20 return %0 : tensor<4x2x3xf32>\n}\n",
    );
    assert!(
        matches!(ops(&m)[0].attrs.get("permutation"), Some(Attr::IntArray(_, v)) if *v == [2, 0, 1])
    );
}

#[test]
fn malformed_fast_path_input_gets_the_token_path_errors() {
    let err = |body: &str| {
        let src = format!("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {{\n{body}\n}}\n");
        match parse_module(&src) {
            Err(e) => e.0.message,
            Ok(_) => panic!("accepted: {src}"),
        }
    };
    assert_eq!(
        err("  return %7 : tensor<2xf32>"),
        "use of undefined value '%7'"
    );
    assert_eq!(
        err("  %0 = stablehlo.transpose %a, dims = [0,, 1] : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>"),
        "expected integer, found ','"
    );
    assert_eq!(
        err("  %0 = stablehlo.abs %a : tensor<?xf32>\n  return %0 : tensor<2xf32>"),
        "dynamic dimensions are unsupported (static shapes only; a '?' needs a \
         #stablehlo.bounds encoding)"
    );
}
