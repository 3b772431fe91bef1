//! Function declarations (`func.func private @f(tensor<...>) -> ...` without a body) and
//! function bodies ended by `stablehlo.return`, as MLIR's `func` dialect allows them:
//! a declaration is kept and printed back as a signature; it must be private and not the
//! entry; calls to it verify against its signature.

mod verify_util;

use neuronc_ir::{parse_module, print_module, verify_module, PrintOptions};
use verify_util::{fails, ok};

const CALLER: &str = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = func.call @decl(%arg0, %c) : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
";

#[test]
fn declarations_parse_verify_and_print_back() {
    let src = format!(
        "func.func private @decl(tensor<4xf32> {{jax.x = 1 : i64}}, tensor<i32>) -> tensor<4xf32>
func.func private @named(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<i1>)
func.func private @mesh()
{CALLER}"
    );
    let m = parse_module(&src).unwrap();
    verify_module(&m).unwrap();
    let decl = m.func("decl").unwrap();
    assert!(m.is_declaration(decl));
    assert_eq!(m.region(decl.body).args.len(), 2);
    assert!(m.is_declaration(m.func("mesh").unwrap()));
    assert!(!m.is_declaration(m.func("main").unwrap()));
    assert_eq!(m.entry().map(|f| f.name.as_str()), Some("main"));
    for generic in [false, true] {
        let text = print_module(
            &m,
            &PrintOptions {
                generic,
                debug_locs: false,
            },
        );
        // MLIR's spelling of a declaration: argument types only, no body.
        assert!(
            text.contains(
                "func.func private @decl(tensor<4xf32> {jax.x = 1 : i64}, tensor<i32>) -> tensor<4xf32>\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "func.func private @named(tensor<4xf32>) -> (tensor<4xf32>, tensor<i1>)\n"
            ),
            "{text}"
        );
        assert!(text.contains("func.func private @mesh()\n"), "{text}");
        let back = parse_module(&text).unwrap();
        verify_module(&back).unwrap();
        assert_eq!(
            print_module(&back, &PrintOptions::default()),
            print_module(&m, &PrintOptions::default())
        );
    }
}

#[test]
fn generic_form_declaration_takes_its_arguments_from_function_type() {
    // As `mlir-opt --mlir-print-op-generic` prints a declaration: an empty region.
    let src = r#""builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>, sym_name = "decl", sym_visibility = "private"}> ({
  }) : () -> ()
}) : () -> ()
"#;
    let m = parse_module(src).unwrap();
    let f = m.func("decl").unwrap();
    assert!(m.is_declaration(f));
    assert_eq!(m.region(f.body).args.len(), 2);
    verify_module(&m).unwrap();
}

#[test]
fn declarations_must_be_private_and_not_the_entry() {
    fails(
        "func.func @decl(tensor<4xf32>) -> tensor<4xf32>\n",
        &["symbol declaration '@decl' cannot have public visibility"],
    );
    fails(
        "func.func private @main(tensor<4xf32>) -> tensor<4xf32>\n",
        &["entry function '@main' must have a body"],
    );
}

#[test]
fn calls_to_declarations_are_type_checked() {
    ok(&format!(
        "func.func private @decl(tensor<4xf32>, tensor<i32>) -> tensor<4xf32>\n{CALLER}"
    ));
    fails(
        &format!("func.func private @decl(tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n{CALLER}"),
        &["expects the callee '@decl' type"],
    );
}

#[test]
fn a_body_needs_named_arguments() {
    let e = parse_module("func.func @f(tensor<4xf32>) -> tensor<4xf32> {\n  func.return\n}\n")
        .unwrap_err();
    assert!(e.to_string().contains("needs named arguments"), "{e}");
}

#[test]
fn stablehlo_return_may_end_a_function_body() {
    // MLIR's func.func accepts any terminator (StableHLO's print_stablehlo.mlir relies on
    // it); the returned types must still be the function's result types.
    ok(
        "func.func @f(%a: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>) {
  stablehlo.return %a, %a : tensor<3xi64>, tensor<3xi64>
}
",
    );
    ok("func.func @g(%a: tensor<3xi64>) {
  \"stablehlo.return\"() : () -> ()
}
");
    fails(
        "func.func @h(%a: tensor<3xi64>) -> tensor<3xf32> {
  stablehlo.return %a : tensor<3xi64>
}
",
        &["requires operand types to match the result types of '@h'"],
    );
}
