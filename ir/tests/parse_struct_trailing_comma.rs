//! `#stablehlo.scatter<..., index_vector_dim = 1,>` (trailing comma, as in StableHLO's own
//! `ops_stablehlo.mlir` positive tests, which MLIR accepts) parses to the same attribute
//! as the form without the comma.

use neuronc_ir::{parse_module, print_module, PrintOptions};

fn module(trailing: &str) -> String {
    format!(
        r#"func.func @main(%a: tensor<3xi32>, %i: tensor<1x1xi32>, %u: tensor<1xi32>) -> tensor<3xi32> {{
  %0 = "stablehlo.scatter"(%a, %i, %u) ({{
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    "stablehlo.return"(%y) : (tensor<i32>) -> ()
  }}) {{
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1{trailing}>
  }} : (tensor<3xi32>, tensor<1x1xi32>, tensor<1xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}}"#
    )
}

#[test]
fn trailing_comma_in_struct_attribute() {
    let with = parse_module(&module(",")).expect("trailing comma accepted");
    let without = parse_module(&module("")).expect("plain form accepted");
    let opts = PrintOptions::default();
    assert_eq!(print_module(&with, &opts), print_module(&without, &opts));
    // A lone comma is still an error.
    assert!(parse_module(&module(",,")).is_err());
}
